import { z } from 'zod';
import { UsageError } from './cli-errors';
import { HEADER_NAME, type InvokeRequest } from './invoke/invoke-request';
import { readLocalFile } from './read-local-file';

/**
 * A saved sample request (`gi connector run --request sample.json`): the request a webhook caller
 * would send, kept beside the connector so a run can be repeated. Every field is optional:
 *
 *   { "query": { "source": "crm", "tag": ["a", "b"] }   or "source=crm&tag=a&tag=b",
 *     "headers": { "X-Trace": "t1" },
 *     "contentType": "application/json",                 default application/json when there is a body
 *     "body": { "orderId": 42 } }                         JSON; a string is the body's text exactly as given
 */
const scalar = z.union([z.string(), z.number(), z.boolean()]);
const schema = z.strictObject({
  query: z
    .union([z.string(), z.record(z.string(), z.union([scalar, z.array(scalar)]))], {
      error: 'must be a query string such as "a=1&b=2" or an object of names to values (a value may be a list)',
    })
    .optional(),
  headers: z
    .record(z.string(), z.string({ error: 'must be a string' }), { error: 'must be an object of header names to string values' })
    .superRefine((headers, ctx) => {
      for (const name of Object.keys(headers)) {
        if (!HEADER_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'is not a valid header name' });
        else if (name.toLowerCase() === 'content-type') ctx.addIssue({ code: 'custom', path: [name], message: 'goes in the contentType field' });
      }
    })
    .optional(),
  contentType: z.string({ error: 'must be a string such as application/json' }).min(1, 'must not be empty').optional(),
  body: z.json({ error: 'must be JSON (a string is sent as text, exactly as given)' }).optional(),
});

export const SAMPLE_REQUEST_FIELDS = Object.keys(schema.shape);

export type SampleRequest = Pick<InvokeRequest, 'body' | 'contentType' | 'query' | 'headers'>;

/** Reads and checks a sample request file; an invalid one is a usage error naming the field. */
export async function readSampleRequest(file: string, helpCommand: string): Promise<SampleRequest> {
  const text = (await readLocalFile(file, '--request')).toString('utf8');
  const problem = (message: string) => new UsageError(`--request ${file}: ${message}`, helpCommand);
  let data: unknown;
  try {
    data = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw problem(`not valid JSON (${(error as Error).message})`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw problem(`must be a JSON object with the fields ${SAMPLE_REQUEST_FIELDS.join(', ')}`);
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw problem(parsed.error.issues.map(describeIssue).join('; '));
  return sampleRequestOf(parsed.data);
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    return `${issue.keys.map((key) => `"${key}"`).join(', ')}: not a field of a sample request (${SAMPLE_REQUEST_FIELDS.join(', ')})`;
  }
  return `${issue.path.map(String).join('.')} ${issue.message}`;
}

function sampleRequestOf(sample: z.infer<typeof schema>): SampleRequest {
  const query =
    typeof sample.query === 'string'
      ? [...new URLSearchParams(sample.query.replace(/^\?/, ''))]
      : Object.entries(sample.query ?? {}).flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((v): [string, string] => [name, String(v)]));
  const headers = Object.entries(sample.headers ?? {});
  if (sample.body === undefined) return { query, headers, ...(sample.contentType ? { contentType: sample.contentType } : {}) };
  const body = Buffer.from(typeof sample.body === 'string' ? sample.body : JSON.stringify(sample.body), 'utf8');
  return { query, headers, body, contentType: sample.contentType ?? 'application/json' };
}

/** What the command line gave; each part it gives wins over the sample's. */
export interface CommandLineRequest {
  /** From --body or --body-file: replaces the sample's body and its content type together. */
  body?: Buffer;
  /** --content-type (or the type --body/--body-file implied). */
  contentType?: string;
  query: Array<[string, string]>;
  headers: Array<[string, string]>;
}

/**
 * The sample with the command line laid over it: --body/--body-file replace the body (and its type),
 * --content-type the type, and a --query or --header replaces every value the sample gives that name
 * (header names in any case); the sample's other names stay.
 */
export function overrideSample(sample: SampleRequest, given: CommandLineRequest): SampleRequest {
  const replace = (base: Array<[string, string]>, over: Array<[string, string]>, key: (name: string) => string) => {
    const named = new Set(over.map(([name]) => key(name)));
    return [...base.filter(([name]) => !named.has(key(name))), ...over];
  };
  const query = replace(sample.query, given.query, (name) => name);
  const headers = replace(sample.headers, given.headers, (name) => name.toLowerCase());
  if (given.body !== undefined) return { query, headers, body: given.body, contentType: given.contentType };
  const contentType = given.contentType ?? sample.contentType;
  return { query, headers, ...(sample.body !== undefined ? { body: sample.body } : {}), ...(contentType ? { contentType } : {}) };
}
