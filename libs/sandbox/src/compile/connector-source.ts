/**
 * How a connector's code is turned into something QuickJS runs: the code is the body of an async
 * function, so top-level `await` and `return` work. Line numbers the engine reports are mapped back
 * to the author's code by removing the wrapper's lines.
 */
export const CONNECTOR_FILENAME = 'connector.js';

const FUNCTION_HEADER = 'async function connector() {\n';
const FUNCTION_FOOTER = '\n}';
const WRAPPER_LINES = 1;

/** The code as an expression whose value is the connector function (not yet called). */
export const wrapConnector = (code: string) => `(${FUNCTION_HEADER}${code}${FUNCTION_FOOTER})`;

/**
 * The source text of the connector function, as `Function.prototype.toString` gives it when the
 * wrapped code is one function, start to end. Code that closes the function body early (an
 * unmatched "}") and goes on with statements yields some other function, or none.
 */
export const connectorFunctionSource = (code: string) => FUNCTION_HEADER + code + FUNCTION_FOOTER;

export interface SourceLocation {
  line: number;
  column: number;
}

/** A line of the wrapped source as a line of the author's code (at least 1). */
export const toUserLine = (wrappedLine: number) => Math.max(1, wrappedLine - WRAPPER_LINES);

/** The first `connector.js:line[:column]` frame of a QuickJS stack, in the author's coordinates. */
export function locateInStack(stack: string): SourceLocation | null {
  const match = /connector\.js:(\d+)(?::(\d+))?/.exec(stack);
  if (!match) return null;
  return { line: toUserLine(Number(match[1])), column: match[2] ? Number(match[2]) : 1 };
}
