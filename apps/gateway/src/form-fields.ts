import { badRequest, GiError, isJsonMediaType, parseJson } from '@gi/domain';

const FORBIDDEN_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * RequestBody of a multipart call, built from its non-file parts: an object of field name -> value,
 * in the order sent. A value is the part's text, or the parsed JSON when the part says its
 * Content-Type is JSON. A name sent more than once maps to an array of its values. No fields: `{}`.
 */
export class FormFields {
  private readonly fields: Record<string, unknown> = {};
  private readonly repeated = new Set<string>();

  /** `maxJsonDepth`: the deepest nesting of a part sent as JSON. */
  constructor(private readonly maxJsonDepth: number) {}

  add(name: string | undefined, value: string, mimeType: string): void {
    if (!name) throw badRequest('Every form field needs a name (Content-Disposition: form-data; name="...").');
    if (FORBIDDEN_NAMES.has(name)) throw badRequest(`The form field name '${name}' is not allowed.`);
    const parsed = isJsonMediaType(mimeType.toLowerCase()) ? parseJsonField(name, value, this.maxJsonDepth) : value;
    if (!Object.prototype.hasOwnProperty.call(this.fields, name)) {
      this.fields[name] = parsed;
    } else if (this.repeated.has(name)) {
      (this.fields[name] as unknown[]).push(parsed);
    } else {
      this.fields[name] = [this.fields[name], parsed];
      this.repeated.add(name);
    }
  }

  toRequestBody(): Record<string, unknown> {
    return this.fields;
  }
}

function parseJsonField(name: string, text: string, maxDepth: number): unknown {
  try {
    return parseJson(text, maxDepth);
  } catch (error) {
    const reason = error instanceof GiError ? error.detail.replace(/^The request body could not be read: /, '') : 'it is not valid JSON.';
    throw badRequest(`The form field '${name}' is sent as JSON but could not be read: ${reason}`);
  }
}
