import { PassThrough } from 'node:stream';

/** A stream standing in for a terminal's stdout or stderr: everything written to it, as text. */
export class Capture extends PassThrough {
  text = '';
  constructor() {
    super();
    this.on('data', (c: Buffer) => (this.text += c.toString()));
  }
}
