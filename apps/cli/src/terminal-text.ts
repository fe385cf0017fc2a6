import type { TextSink } from './cli-io';

/**
 * Text a caller or a connector wrote (a log line, an error, a reply, code) reaches the operator's
 * terminal as inert text: every C0 control character, DEL and every C1 control character is shown
 * as `\xNN`, so ESC, CSI and OSC sequences cannot clear the screen, move the cursor, plant links or
 * write the clipboard. Tab and (unless `singleLine`) newline are kept: they are layout.
 */
export function terminalText(text: string, options: { singleLine?: boolean } = {}): string {
  const pattern = options.singleLine ? SINGLE_LINE_CONTROLS : CONTROLS;
  return text.replace(pattern, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

// C0 but tab and newline, DEL, C1 (U+0080-U+009F).
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
// The same, and newline too: a field or a table cell is one line, whatever the text holds.
const SINGLE_LINE_CONTROLS = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/g;

/**
 * A sink that writes everything through terminalText. The drawing the CLI does itself (the spinner
 * clearing its line) goes to `raw`, the sink underneath.
 */
export function terminalSink(sink: TextSink): TextSink {
  return { write: (text: string) => sink.write(terminalText(text)), isTTY: sink.isTTY, raw: sink.raw ?? sink };
}
