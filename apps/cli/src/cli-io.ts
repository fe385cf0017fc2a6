/** Where the CLI writes: process.stdout/stderr in production, string buffers in tests. */
export interface TextSink {
  write(text: string): unknown;
  /** True when a person is watching (enables the live progress indicator). */
  readonly isTTY?: boolean;
  /** The sink underneath a terminalSink: only for the CLI's own drawing (the spinner's line clearing). */
  readonly raw?: TextSink;
}

export interface CliIo {
  out: TextSink;
  err: TextSink;
  /** Waits between polls; tests replace it to run without sleeping. */
  sleep(ms: number): Promise<void>;
  now(): number;
  /** All of standard input (`--body-file -`). */
  readStdin(): Promise<Buffer>;
}

export const nodeIo = (): CliIo => ({
  out: process.stdout,
  err: process.stderr,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  now: () => Date.now(),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  },
});

/** Writes a line, adding the newline only when the text lacks one. */
export const writeLine = (sink: TextSink, text: string) => sink.write(text.endsWith('\n') ? text : `${text}\n`);
