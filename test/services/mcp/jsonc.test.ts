import { describe, expect, it } from 'vitest';
import { parseServersJson } from '../../../app/services/mcp/config.js';
import { jsonErrorText, parseJsonc, stripJsonc } from '../../../app/services/mcp/jsonc.js';
import { planSetup } from '../../../app/mcp-clients/plan.js';

const SECRET = 'sk-live-9f8e7d6c5b4a3210';

/** V8's own error for `text`, as the code that shows it gets it. */
function parseError(parse: () => unknown): unknown {
  try {
    parse();
  } catch (err) {
    return err;
  }
  throw new Error('it parsed');
}

describe('saying why a JSON text does not parse, without quoting it', () => {
  it('leaves out the excerpt of the text V8 quotes, so a token in it is not shown', () => {
    const text = `{"env": {"TOKEN": ${SECRET}}}`;
    const err = parseError(() => JSON.parse(text));
    // The premise: this Node quotes the text in its message.
    expect((err as Error).message).toContain('sk-live');
    const said = jsonErrorText(err, text);
    expect(said).not.toContain(SECRET);
    expect(said).not.toContain('sk-live');
    expect(said).toMatch(/^Unexpected token/);
  });

  it('says where as a line and column of the text the user has', () => {
    const text = `{\n  "mcpServers": {\n    "a": {"command": "x",}\n  }\n}`;
    const said = jsonErrorText(
      parseError(() => JSON.parse(text)),
      text,
    );
    expect(said).toMatch(/at line 3, column 26$/);
    expect(said).not.toContain('position');
  });

  it("keeps a JSONC file's lines and columns through its comments", () => {
    const text = `{\n  /* a comment\n     over two lines */ "servers": { // and one here\n    "a": {"command": "x"} "b": {}\n  }\n}`;
    expect(stripJsonc(text)).toHaveLength(text.length);
    const said = jsonErrorText(
      parseError(() => parseJsonc(text)),
      text,
    );
    expect(said).toMatch(/at line 4, column 27$/);
  });

  it('shows nothing of a message it does not recognise that quotes the text', () => {
    expect(jsonErrorText(new Error(`Bad "${SECRET}" here`), SECRET)).toBe(
      'the text does not parse',
    );
  });

  it('keeps secrets out of the reasons the setup and the import give', () => {
    const file = `{"mcpServers": {"other": {"env": {"API_KEY": ${SECRET}}}}}`;
    const plan = planSetup('claude', file, { command: 'advent-agent', args: ['mcp'] });
    expect(plan.ok).toBe(false);
    expect(!plan.ok && plan.reason).toMatch(/^it is not valid JSON: Unexpected token/);
    expect(!plan.ok && plan.reason).not.toContain(SECRET);
    const pasted = parseError(() => parseServersJson(file));
    expect((pasted as Error).message).toMatch(/^this is not JSON \(/);
    expect((pasted as Error).message).not.toContain(SECRET);
  });
});
