import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, ValidationContext } from 'openapi-backend';
import type { Operation } from 'openapi-backend';
import { parse } from 'yaml';

/**
 * Every reply the e2e helpers receive, checked against docs/openapi.yaml: the operation is found by
 * method and path (openapi-backend's router), then the status must be one it lists, the headers it
 * declares for that status must match their schemas, and a JSON body (`application/json` or
 * `application/problem+json`) must match the schema of its media type. A reply that drifts fails the
 * call with the operation, the status and the schema's complaint. Paths the description does not know
 * (a deliberate 404) are not checked; a 405 is checked against the 405 its path lists.
 */

type Json = Record<string, unknown>;
interface ResponseObject {
  headers?: Record<string, { schema?: Json; required?: boolean }>;
  content?: Record<string, { schema?: Json }>;
}

/** A compiled schema, as Ajv returns it. */
interface ValidateFunction {
  (data: unknown): boolean;
  errors?: Array<{ instancePath?: string; message?: string; params?: object }> | null;
}

let backend: Promise<OpenAPIBackend> | undefined;
const bodyValidators = new Map<string, ValidateFunction>();

/** The description, parsed and dereferenced once per test file. */
function loadApi(): Promise<OpenAPIBackend> {
  backend ??= (async () => {
    const definition = parse(readFileSync(join(__dirname, '../../../docs/openapi.yaml'), 'utf8')) as never;
    // quick: no check of the document itself, which openapi-backend makes against OpenAPI 3.0 and so
    // refuses our 3.1 (apps/services/src/openapi.medium.test.ts checks it against the routes).
    // Formats (date-time, uri, uuid...) are checked too, not ignored with a warning.
    const customizeAjv = (ajv: Parameters<typeof addFormats>[0]) => addFormats(ajv);
    const api = (await new OpenAPIBackend({ definition, strict: true, quick: true, customizeAjv }).init()) as OpenAPIBackend;
    if (api.router.getOperations().length === 0) throw new Error('docs/openapi.yaml: no operation could be read.');
    return api;
  })();
  return backend;
}

/** The operation a request is for; for a 405, the operation of its path whatever the method. */
function operationOf(api: OpenAPIBackend, method: string, path: string, status: number): Operation | undefined {
  const router = api.router;
  const exact = router.matchOperation({ method, path, headers: {} });
  if (exact || status !== 405) return exact;
  return router.getOperations().find((operation) => router.matchOperation({ method: operation.method, path, headers: {} })?.operationId === operation.operationId);
}

function bodyValidator(api: OpenAPIBackend, operation: Operation, status: string, mediaType: string, schema: Json): ValidateFunction {
  const key = `${operation.operationId} ${status} ${mediaType}`;
  let validate = bodyValidators.get(key);
  if (!validate) {
    validate = api.validator.getAjv(ValidationContext.Response).compile(schema) as ValidateFunction;
    bodyValidators.set(key, validate);
  }
  return validate;
}

const describeErrors = (errors: ValidateFunction['errors']) =>
  (errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || '(body)'} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`)
    .join('; ');

/** The drift of one reply from the description, or null when it matches (or its path is not described). */
export async function openApiDrift(method: string, url: string, reply: { status: number; headers: Headers; json: unknown }): Promise<string | null> {
  const api = await loadApi();
  const path = new URL(url).pathname;
  const operation = operationOf(api, method.toUpperCase(), path, reply.status);
  if (!operation) return null;
  const name = `${operation.operationId} (${method.toUpperCase()} ${path}) answered ${reply.status}`;
  const responses = (operation.responses ?? {}) as Record<string, ResponseObject>;
  const response = responses[String(reply.status)] ?? responses[`${String(reply.status)[0]}XX`] ?? responses.default;
  if (!response) return `${name}: status not listed (${Object.keys(responses).join(', ')})`;

  for (const [header, declared] of Object.entries(response.headers ?? {})) {
    const value = reply.headers.get(header);
    if (value === null) {
      if (declared.required) return `${name}: header ${header} is required`;
      continue;
    }
    if (declared.schema) {
      const validate = bodyValidator(api, operation, `${reply.status} header ${header}`, 'text/plain', declared.schema);
      const typed = declared.schema.type === 'integer' || declared.schema.type === 'number' ? Number(value) : value;
      if (!validate(typed)) return `${name}: header ${header} ${JSON.stringify(value)}: ${describeErrors(validate.errors)}`;
    }
  }

  const contentType = (reply.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (!response.content) return contentType && reply.status !== 304 && reply.status !== 204 && reply.json !== undefined ? `${name}: a body (${contentType}) where none is described` : null;
  if (!contentType) return null;
  const media = response.content[contentType] ?? response.content[`${contentType.split('/')[0]}/*`] ?? response.content['*/*'];
  if (!media) return `${name}: content type ${contentType} not listed (${Object.keys(response.content).join(', ')})`;
  if (!media.schema || !/[/+]json$/.test(contentType)) return null;
  if (reply.json === undefined) return `${name}: ${contentType} body is not JSON`;
  const validate = bodyValidator(api, operation, String(reply.status), contentType, media.schema);
  return validate(reply.json) ? null : `${name}: body does not match the ${contentType} schema: ${describeErrors(validate.errors)}`;
}
