/**
 * End-to-end with the new dialects, as a user sees them: a XiaoZhi server (added in Connections)
 * calls a tool, the permission prompt names it and the user allows it once; a robot server's
 * execute (sent twice, as the reference server does) is denied and run never; a push-to-talk turn
 * over XiaoZhi goes up as Opus and the Opus reply is played; and the Connections page shows a
 * connection of each kind, an MCP endpoint being tools only (no chat).
 */
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EndpointSim } from '../../sim/endpoint/server.js';
import { RobotSim } from '../../sim/robot/server.js';
import { sineTone } from '../../sim/kit/tone.js';
import { XiaozhiSim, type XiaozhiSimOptions } from '../../sim/xiaozhi/server.js';
import {
  adventProfile,
  endpointProfile,
  robotProfile,
  xiaozhiProfile,
} from '../../app/contract/profiles/index.js';
import { en } from '../../renderer/i18n/en.js';
import {
  by,
  cleanup,
  dismissToasts,
  goTo,
  launchBrowser,
  openApp,
  promptUp,
  startSim,
  text,
} from './harness.js';
import {
  FIXTURE,
  bestCorrelation,
  holdMic,
  launchVoiceBrowser,
  pcmSamples,
  wavSamples,
} from './voice-helpers.js';

/** A simulated XiaoZhi server for this test, stopped when it finishes. */
async function startXiaozhi(options: XiaozhiSimOptions = { demo: false }): Promise<XiaozhiSim> {
  const sim = await XiaozhiSim.start(options);
  cleanup(() => sim.stop());
  return sim;
}

async function startRobot(): Promise<RobotSim> {
  const sim = await RobotSim.start({ demo: false });
  cleanup(() => sim.stop());
  return sim;
}

async function startEndpoint(): Promise<EndpointSim> {
  const sim = await EndpointSim.start();
  cleanup(() => sim.stop());
  return sim;
}

/** Every file under `dir` (none if it does not exist). */
async function filesUnder(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

/** Connections → Add → kind, name, address → Save and connect, as a user does. */
async function addConnectionInUi(
  page: Page,
  profile: { kind: 'xiaozhi' | 'endpoint' | 'robot'; name: string; url: string },
): Promise<void> {
  await goTo(page, 'connections');
  await page.getByTestId('connection-add').click();
  const form = page.getByTestId('profile-form');
  await form.getByTestId('profile-kind').selectOption(profile.kind);
  await page.locator(by('profile-form', { kind: profile.kind })).waitFor();
  await form.getByTestId('profile-name').fill(profile.name);
  await form.getByTestId('profile-url').fill(profile.url);
  await form.getByTestId('profile-save-connect').click();
  await form.waitFor({ state: 'detached' });
  await dismissToasts(page);
}

interface Counters {
  receivedSamples: number;
  playedSamples: number;
  capturedBytes: number;
}

function counters(page: Page): Promise<Counters> {
  return page.evaluate(() => {
    const a = (
      globalThis as unknown as {
        __adventAudio: { receivedSamples: number; playedSamples: number; captured: ArrayBuffer[] };
      }
    ).__adventAudio;
    return {
      receivedSamples: a.receivedSamples,
      playedSamples: a.playedSamples,
      capturedBytes: a.captured.reduce((n, b) => n + b.byteLength, 0),
    };
  });
}

describe('servers of every kind, through one permission gate', { timeout: 60_000 }, () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('XiaoZhi added in Connections: its tool call asks in the page, is allowed once, runs and is recorded', async () => {
    const sim = await startXiaozhi();
    const { host, page, errors } = await openApp(browser);
    const name = 'Kitchen XiaoZhi';
    await addConnectionInUi(page, { kind: 'xiaozhi', name, url: sim.url });
    await goTo(page, 'chat');
    await page.locator(by('connection-banner', { state: 'ready' })).waitFor();
    const tools = await sim.waitForTools(1, 10_000);
    expect(tools.map((t) => t.name)).toContain('create_file');

    // The server calls the tool as its AI would; the user is asked first.
    const call = sim.callTool('create_file', { filename: 'xz.txt', content: 'hi' });
    const modal = await promptUp(page);
    expect(await text(modal.getByTestId('prompt-summary'))).toMatch(/^Create file xz\.txt /);
    expect(await text(modal.getByTestId('prompt-connection'))).toBe(name);
    expect(await text(modal)).toContain(en.prompt.wants.replace('{{connection}}', name));
    expect(await text(modal.getByTestId('prompt-paths'))).toBe(path.join(host.filesRoot, 'xz.txt'));
    await page.locator(by('tool-card', { service: 'create_file', state: 'waiting' })).waitFor();

    await modal.getByTestId('prompt-allow-once').click();
    const result = await call;
    expect(result.isError).toBe(false);
    await modal.waitFor({ state: 'detached' });
    expect(await readFile(path.join(host.filesRoot, 'xz.txt'), 'utf8')).toBe('hi');

    const card = page.locator(by('tool-card', { service: 'create_file', state: 'done' }));
    await card.waitFor();
    expect(await text(card.getByTestId('tool-decision'))).toBe(en.decision['allowed-once']);
    expect(await text(card.getByTestId('tool-outcome'))).toBe(en.outcome.ok);

    // The audit log has it under the connection's name, and Activity shows that record.
    const audit = await host.api.queryAudit({ service: 'create_file' });
    expect(audit.records).toHaveLength(1);
    const record = audit.records[0]!;
    expect(record).toMatchObject({
      connection: name,
      dialect: 'xiaozhi',
      decision: 'allowed-once',
      outcome: 'ok',
    });
    await card.getByTestId('tool-audit-link').click();
    await page.locator('[data-testid="nav-activity"][aria-current="page"]').waitFor();
    const row = page.locator(by('audit-row', { seq: record.seq }));
    await row.waitFor();
    expect(await text(row)).toContain(name);
    expect(await text(row)).toContain(en.decision['allowed-once']);

    // The device side kept every rule of the protocol (identity, hello, session ids, MCP).
    expect(sim.violations).toEqual([]);
    expect(sim.errors).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('robot: an execute (sent twice by the server) is denied in the page, answered once with an error, and never run', async () => {
    const sim = await startRobot();
    const { host, page, errors } = await openApp(browser, { args: ['--robot', sim.url] });
    const name = `Robot 127.0.0.1:${sim.port}`;
    await page.locator(by('connection-banner', { state: 'ready' })).waitFor();
    await sim.waitForRegistration((r) => r.tools.some((t) => t.name === 'create_file'), 10_000);

    const outcome = sim.execute('create_file', { filename: 'robot.txt', content: 'beep' });
    const modal = await promptUp(page);
    expect(await text(modal.getByTestId('prompt-summary'))).toMatch(/^Create file robot\.txt /);
    expect(await text(modal.getByTestId('prompt-connection'))).toBe(name);
    await modal.getByTestId('prompt-deny').click();

    const answer = await outcome;
    expect(answer.result).toBeUndefined();
    expect(answer.error?.code).toBeGreaterThanOrEqual(-32099);
    expect(answer.error?.code).toBeLessThanOrEqual(-32000);
    expect(answer.error?.message).toMatch(/declined/);
    await modal.waitFor({ state: 'detached' });

    // One denied call and one duplicate, both recorded; neither ran, nothing asked twice.
    await expect
      .poll(async () => (await host.api.queryAudit({})).records.length, { timeout: 10_000 })
      .toBe(2);
    const records = (await host.api.queryAudit({ order: 'asc' })).records;
    expect(records.map((r) => r.decision).sort()).toEqual(['denied', 'duplicate']);
    for (const r of records) {
      expect(r).toMatchObject({
        connection: name,
        dialect: 'robot',
        service: 'create_file',
        outcome: 'refused',
      });
    }
    const cards = page.locator(by('tool-card', { service: 'create_file', state: 'done' }));
    await expect.poll(() => cards.count(), { timeout: 10_000 }).toBe(2);
    expect((await cards.getByTestId('tool-decision').allTextContents()).sort()).toEqual(
      [en.decision.denied, en.decision.duplicate].sort(),
    );
    expect(await page.getByTestId('prompt-modal').count()).toBe(0);
    expect(sim.responses).toHaveLength(1);
    expect(await filesUnder(host.filesRoot)).toEqual([]);
    // Exactly one response (none to the id-less twin), in the doc's shape.
    expect(sim.violations).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('Connections lists a connection of each kind with its badge; an MCP endpoint made active has no chat', async () => {
    const xz = await startXiaozhi();
    const endpoint = await startEndpoint();
    const robot = await startRobot();
    const advent = await startSim();
    const { host, page, errors } = await openApp(browser, {
      args: ['--xiaozhi', xz.url, '--endpoint', endpoint.url, '--robot', robot.url],
    });
    const profile = await host.api.saveConnection(
      {
        kind: 'advent',
        name: 'Advent lab',
        host: '127.0.0.1',
        port: advent.port,
      },
      'e2e-token',
    );
    await host.api.connect(profile.id);
    await endpoint.waitForTools((tools) => tools.some((t) => t.name === 'create_file'), 10_000);

    await goTo(page, 'connections');
    const kinds: Array<[string, string]> = [
      [profile.id, adventProfile.short.en],
      ['cli-xiaozhi', xiaozhiProfile.short.en],
      ['cli-endpoint', endpointProfile.short.en],
      ['cli-robot', robotProfile.short.en],
    ];
    for (const [id, label] of kinds) {
      await page.locator(by(`connection-${id}`, { state: 'ready' })).waitFor();
      expect(await text(page.getByTestId(`connection-kind-${id}`))).toBe(label);
    }
    // The endpoint's token went to the keychain: the address shown does not carry it.
    const endpointCard = page.getByTestId('connection-cli-endpoint');
    expect(await text(endpointCard)).toContain(en.connections.tokenSaved);
    expect(await text(endpointCard)).not.toContain(endpoint.token);

    await page.getByTestId('connection-activate-cli-endpoint').click();
    await page.locator(by('connection-cli-endpoint', { active: true })).waitFor();
    await goTo(page, 'chat');
    const endpointName = `MCP endpoint 127.0.0.1:${endpoint.port}`;
    const hint = en.connections.noChat.replace('{{name}}', endpointName);
    await expect.poll(() => text(page.locator('.composer-hint'))).toBe(hint);
    expect(await page.getByTestId('chat-input').isDisabled()).toBe(true);
    expect(await page.getByTestId('send').isDisabled()).toBe(true);

    // Tools only, yet its calls go through the same gate.
    const call = endpoint.callTool('create_file', { filename: 'ep.txt', content: 'x' });
    const modal = await promptUp(page);
    expect(await text(modal.getByTestId('prompt-connection'))).toBe(endpointName);
    await modal.getByTestId('prompt-deny').click();
    expect((await call).isError).toBe(true);
    await modal.waitFor({ state: 'detached' });
    expect(await filesUnder(host.filesRoot)).toEqual([]);

    expect(xz.violations).toEqual([]);
    expect(endpoint.violations).toEqual([]);
    expect(robot.violations).toEqual([]);
    expect(errors).toEqual([]);
  });
});

describe('voice over XiaoZhi', { timeout: 60_000 }, () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchVoiceBrowser();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('push-to-talk: the microphone goes up as 16 kHz Opus, and the 24 kHz Opus reply is played', async () => {
    // One second of reply at the server's downlink rate (24 kHz by default).
    const reply = sineTone(1000, 330, 0.2, 24_000);
    const replySamples = reply.length / 2;
    const sim = await startXiaozhi({
      demo: false,
      onText: (turn, conn) => {
        conn.stt(turn.voice ? '(voice)' : turn.text);
        conn.say('I heard you.', { pcm: reply });
      },
    });
    const { page, errors } = await openApp(browser, { args: ['--xiaozhi', sim.url] });
    await page.locator(by('connection-banner', { state: 'ready' })).waitFor();
    await sim.waitForTools(1, 10_000);
    expect(sim.conn().record.hello?.audio_params).toMatchObject({
      format: 'opus',
      sample_rate: 16_000,
      frame_duration: 60,
    });

    await holdMic(page, 2200);
    const turn = await sim.waitUntil(() => sim.turns[0], 'a voice turn', 10_000);
    expect(turn.voice).toBe(true);
    expect(sim.listenEvents.map((e) => e.state)).toEqual(['start', 'stop']);
    expect(sim.listenEvents[0]?.mode).toBe('manual');

    // Binary frames of Opus, decoded by the server: the spoken file, one 60 ms packet at a time.
    expect(sim.received.filter((r) => r.kind === 'binary').length).toBeGreaterThan(20);
    const received = pcmSamples(turn.pcm);
    const fixture = wavSamples(FIXTURE);
    expect(received.length).toBeGreaterThan(fixture.length);
    expect(turn.pcm.length % 1920).toBe(0);
    expect(bestCorrelation(received, fixture)).toBeGreaterThanOrEqual(0.8);
    // Everything the page captured went up (the last packet padded with silence).
    const { capturedBytes } = await counters(page);
    expect(turn.pcm.length).toBeGreaterThanOrEqual(capturedBytes);
    expect(turn.pcm.length - capturedBytes).toBeLessThan(1920);

    // The reply: its sentence in the chat, its audio decoded and played through.
    await page
      .locator(by('chat-assistant'))
      .filter({ hasText: 'I heard you.' })
      .waitFor({ timeout: 10_000 });
    await expect
      .poll(() => counters(page), { timeout: 10_000 })
      .toSatisfy(
        (c: Counters) => c.receivedSamples >= replySamples && c.playedSamples >= 0.9 * replySamples,
      );
    await page.locator(by('mic-button', { phase: 'idle' })).waitFor({ timeout: 10_000 });
    expect(sim.violations).toEqual([]);
    expect(sim.errors).toEqual([]);
    expect(errors).toEqual([]);
  });
});
