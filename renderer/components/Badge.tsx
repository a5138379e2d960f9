import type { ReactNode } from 'react';
import type { Decision, Outcome, Risk } from '../../app/contract/index.js';

export type Tone = 'neutral' | 'good' | 'warn' | 'bad' | 'info' | 'accent';

export function Badge({
  tone = 'neutral',
  children,
  title,
  testId,
}: {
  tone?: Tone;
  children: ReactNode;
  title?: string;
  testId?: string;
}) {
  return (
    <span className={`badge badge-${tone}`} title={title} data-testid={testId}>
      {children}
    </span>
  );
}

export function decisionTone(d: Decision): Tone {
  switch (d) {
    case 'auto':
    case 'allowed-once':
    case 'allowed-session':
    case 'allowed-always':
      return 'good';
    case 'user-run':
    case 'duplicate':
      return 'info';
    case 'timeout':
    case 'disabled':
    case 'invalid':
    case 'withdrawn':
      return 'warn';
    default:
      return 'bad';
  }
}

/** An interrupted call may have half-done its work: it reads as a failure until someone looks. */
export function outcomeTone(o: Outcome): Tone {
  return o === 'ok' ? 'good' : o === 'error' || o === 'interrupted' ? 'bad' : 'warn';
}

export function riskTone(r: Risk): Tone {
  return r === 'read' ? 'info' : r === 'private' || r === 'write' ? 'warn' : 'bad';
}
