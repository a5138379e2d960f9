/**
 * The character's faces as the app's own SVG: an emoji needs an emoji font, and where none is
 * installed (many Linux machines) it renders as an empty box. One face per mood key, drawn from
 * a few shared parts (eyes, brows, mouth, extras) on a 48×48 grid. Decorative: the element that
 * shows a face carries the mood's name as its label.
 */
import type { ReactNode } from 'react';
import { type Brows, type Extra, type Eyes, FACES, type Mouth } from '../features/chat/faces.js';
import type { MoodKey } from '../features/chat/mood.js';

const L = 16; // left eye x
const R = 32; // right eye x
const EY = 20; // eye line

function eyes(kind: Eyes): ReactNode {
  switch (kind) {
    case 'dot':
      return (
        <>
          <circle cx={L} cy={EY} r={2.4} className="face-ink" />
          <circle cx={R} cy={EY} r={2.4} className="face-ink" />
        </>
      );
    case 'up':
      return (
        <>
          <circle cx={L + 1} cy={EY - 1.5} r={2.4} className="face-ink" />
          <circle cx={R + 1} cy={EY - 1.5} r={2.4} className="face-ink" />
        </>
      );
    case 'wide':
      return (
        <>
          <circle cx={L} cy={EY} r={4} className="face-eye-white" />
          <circle cx={R} cy={EY} r={4} className="face-eye-white" />
          <circle cx={L} cy={EY} r={1.8} className="face-ink" />
          <circle cx={R} cy={EY} r={1.8} className="face-ink" />
        </>
      );
    case 'happy':
      return (
        <path
          d={`M${L - 4} ${EY + 1}q4 -5 8 0M${R - 4} ${EY + 1}q4 -5 8 0`}
          className="face-line"
        />
      );
    case 'closed':
      return <path d={`M${L - 4} ${EY}q4 3 8 0M${R - 4} ${EY}q4 3 8 0`} className="face-line" />;
    case 'squint':
      return (
        <path
          d={`M${L - 4} ${EY - 3}l6 3l-6 3M${R + 4} ${EY - 3}l-6 3l6 3`}
          className="face-line"
        />
      );
    case 'wink':
      return (
        <>
          <circle cx={L} cy={EY} r={2.4} className="face-ink" />
          <path d={`M${R - 4} ${EY + 1}q4 -5 8 0`} className="face-line" />
        </>
      );
    case 'heart':
      return (
        <>
          {[L, R].map((x) => (
            <path
              key={x}
              d={`M${x} ${EY + 4}l-4.2 -4.2a2.6 2.6 0 0 1 4.2 -3a2.6 2.6 0 0 1 4.2 3z`}
              className="face-heart"
            />
          ))}
        </>
      );
    case 'glasses':
      return (
        <>
          <path d={`M${L - 7} ${EY - 3}h30`} className="face-line" />
          <rect x={L - 6} y={EY - 3} width={11} height={7} rx={3} className="face-ink" />
          <rect x={R - 5} y={EY - 3} width={11} height={7} rx={3} className="face-ink" />
        </>
      );
  }
}

function brows(kind: Brows | undefined): ReactNode {
  switch (kind) {
    case 'sad':
      return (
        <path d={`M${L - 4} ${EY - 5}l6 -2.5M${R + 4} ${EY - 5}l-6 -2.5`} className="face-line" />
      );
    case 'angry':
      return <path d={`M${L - 4} ${EY - 7}l7 3M${R + 4} ${EY - 7}l-7 3`} className="face-line" />;
    case 'raised':
      return (
        <path
          d={`M${L - 4} ${EY - 7}q4 -3 8 0M${R - 4} ${EY - 7}q4 -3 8 0`}
          className="face-line"
        />
      );
    case 'one':
      return <path d={`M${R - 4} ${EY - 8}q4 -2 8 1`} className="face-line" />;
    default:
      return null;
  }
}

function mouth(kind: Mouth): ReactNode {
  switch (kind) {
    case 'smile':
      return <path d="M16 30q8 8 16 0" className="face-line" />;
    case 'grin':
      return <path d="M14 28h20q-2 10 -10 10t-10 -10z" className="face-mouth" />;
    case 'flat':
      return <path d="M17 32h14" className="face-line" />;
    case 'frown':
      return <path d="M16 35q8 -7 16 0" className="face-line" />;
    case 'open':
      return <ellipse cx={24} cy={33} rx={4} ry={4.5} className="face-mouth" />;
    case 'gasp':
      return <ellipse cx={24} cy={34} rx={5} ry={6} className="face-mouth" />;
    case 'smirk':
      return <path d="M18 33q7 2 13 -4" className="face-line" />;
    case 'small':
      return <circle cx={25} cy={33} r={2} className="face-line" />;
    case 'tongue':
      return (
        <>
          <path d="M16 30q8 7 16 0" className="face-line" />
          <path d="M22 33.5v3a3 3 0 0 0 6 0v-3.5" className="face-tongue" />
        </>
      );
    case 'kiss':
      return <path d="M23 29q4 2 0 4q4 2 0 4" className="face-line" />;
    case 'wavy':
      return <path d="M15 33q2.25 -3 4.5 0t4.5 0t4.5 0t4.5 0" className="face-line" />;
  }
}

function extra(kind: Extra): ReactNode {
  switch (kind) {
    case 'blush':
      return (
        <>
          <ellipse cx={11} cy={28} rx={3.5} ry={2} className="face-blush" />
          <ellipse cx={37} cy={28} rx={3.5} ry={2} className="face-blush" />
        </>
      );
    case 'tear':
      return <path d={`M${R + 2} ${EY + 4}q2 4 0 6q-2 -2 0 -6z`} className="face-tear" />;
    case 'sweat':
      return <path d="M38 10q3 4 0 6q-3 -2 0 -6z" className="face-tear" />;
    case 'zzz':
      return <path d="M34 6h5l-5 5h5M40 1h3l-3 3h3" className="face-line face-thin" />;
    case 'heart':
      return (
        <path d="M40 13l-3 -3a1.9 1.9 0 0 1 3 -2.2a1.9 1.9 0 0 1 3 2.2z" className="face-heart" />
      );
  }
}

export function MoodFaceIcon({ mood, size = 34 }: { mood: MoodKey; size?: number }) {
  const face = FACES[mood];
  return (
    <svg
      width={size}
      height={size}
      viewBox="0 0 48 48"
      aria-hidden="true"
      focusable="false"
      className="mood-face"
      data-face={mood}
    >
      <circle cx={24} cy={24} r={21} className="face-skin" />
      {brows(face.brows)}
      {eyes(face.eyes)}
      {mouth(face.mouth)}
      {face.extras?.map((x) => (
        <g key={x}>{extra(x)}</g>
      ))}
    </svg>
  );
}
