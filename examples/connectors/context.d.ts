/**
 * The `Context` API available to Custom Code connectors, for editors and type checks.
 * A connector is the body of an async function: top-level `await` and `return` work.
 * Reference it from a connector file with:  /// <reference path="./context.d.ts" />
 */

/** A file uploaded through GenericIntegrationFileTransfer (the bytes stay in the file store). */
interface ConnectorFile {
  Id: string;
  FileName: string;
  ContentType: string;
  Size: number;
  Sha256: string;
  PartName: string;
}

/** The webhook entity: what the caller sent, and the ResponseBody that becomes the reply. */
interface WebhookEntity {
  /** The caller's query parameters in URL query format (`a=1&b=2`), service parameters removed. */
  RequestParams: string;
  /** The request headers in URL query format; Authorization and Cookie are never stored. */
  RequestHeaders: string;
  /** JSON bodies parsed, form bodies as an object, other text as a string, an empty body as null. */
  RequestBody: any;
  /** The reply to the caller: an object is sent as JSON (or XML), a string as text. */
  ResponseBody: any;
  RequestFiles?: ConnectorFile[];
  [field: string]: any;
}

interface ConnectorHttpRequest {
  /** GET (default), HEAD, POST, PUT, PATCH, DELETE or OPTIONS. */
  method?: string;
  /** http or https; the host must be in the integration's allowed hosts. */
  url: string;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON (with Content-Type: application/json). */
  body?: unknown;
  /** Time limit of this request in milliseconds (default 30 s). */
  timeoutMs?: number;
}

interface ConnectorHttpResponse {
  status: number;
  statusText: string;
  /** Response headers, names in lower case. */
  headers: Record<string, string>;
  /** The body as text. */
  body: string;
  /** The body parsed, when the response is JSON. */
  json?: any;
  /** The URL that answered, after redirects. */
  url: string;
}

interface ReadFileOptions {
  /** First byte to read (default 0). */
  offset?: number;
  /** Bytes to read (at most 8 MiB per call); default: to the end of the file, which must then fit in one call. */
  length?: number;
  /** "utf8" (default) and "base64" give a string, "bytes" an ArrayBuffer. */
  encoding?: "utf8" | "base64" | "bytes";
}

interface ConnectorContext {
  /** A copy of the request entity (the same object on every call of one run), or null when it is not initialized. */
  GetRequestEntity(): WebhookEntity | null;
  /** Sets the entity whose ResponseBody becomes the reply (read when the run ends). */
  SetResponseEntity(entity: { ResponseBody?: unknown; [field: string]: unknown }): void;
  /** Ends the run at once; the caller gets 422 with this title and message. */
  RaiseError(title: string, message: string): never;
  /**
   * Writes a log line of the invocation; objects are written as JSON. Logging more than the
   * integration's `limits.logKiB` (64 KiB by default) ends the run.
   */
  Log(...values: unknown[]): void;
  /** Reports progress (0 to 100), shown to callers polling an asynchronous run. */
  SetProgress(percent: number, message?: string): void;
  /**
   * Reads a file of this call's RequestFiles by its Id: the whole file or a range (cut short at the
   * end of the file; empty past it). Rejects for ids of other requests, bad options, or more than
   * 8 MiB in one call. Starting more file reads and HTTP requests at once than the integration's
   * `limits.pendingCalls` (8 by default) ends the run.
   */
  ReadFile(id: string, options?: ReadFileOptions & { encoding?: "utf8" | "base64" }): Promise<string>;
  ReadFile(id: string, options: ReadFileOptions & { encoding: "bytes" }): Promise<ArrayBuffer>;
  Http: {
    /**
     * An HTTP request to one of the integration's allowed hosts. Private, loopback and link-local
     * addresses are refused, also through DNS names and redirects. Rejects with an Error whose
     * message says why; an HTTP error status is a normal response. Counts against the
     * integration's `limits.pendingCalls` until it settles.
     */
    Request(request: ConnectorHttpRequest): Promise<ConnectorHttpResponse>;
  };
}

declare const Context: ConnectorContext;

/** `console.log/info/debug/warn` write info lines, `console.error` error lines, like Context.Log. */
declare const console: {
  log(...values: unknown[]): void;
  info(...values: unknown[]): void;
  debug(...values: unknown[]): void;
  warn(...values: unknown[]): void;
  error(...values: unknown[]): void;
};
