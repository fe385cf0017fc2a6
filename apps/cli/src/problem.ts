import { CliError } from './cli-errors';

/** An RFC 9457 problem document, or one made up from a non-problem error response. */
export interface Problem {
  type?: string;
  title: string;
  status: number;
  detail?: string;
  invocationId?: string;
  [member: string]: unknown;
}

/** The service answered with an error status. */
export class ApiError extends CliError {
  constructor(readonly problem: Problem) {
    super(describeProblem(problem));
    this.name = 'ApiError';
  }
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

/** "Title: detail (invocation id)" on a single line. */
export function describeProblem(problem: Problem): string {
  const title = oneLine(problem.title);
  const detail = problem.detail ? oneLine(problem.detail) : '';
  const text = detail && detail !== title ? `${title}: ${detail}` : title;
  return problem.invocationId ? `${text} (invocation ${problem.invocationId})` : text;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Reads the error body of a response: the problem document when there is one, else a summary of the text. */
export async function readProblem(response: Response): Promise<Problem> {
  const text = await response.text().catch(() => '');
  const fallback: Problem = { title: `HTTP ${response.status} ${response.statusText}`.trim(), status: response.status };
  if (/json/i.test(response.headers.get('content-type') ?? '')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
    if (isRecord(parsed) && typeof parsed.title === 'string') {
      return {
        ...parsed,
        title: parsed.title,
        status: typeof parsed.status === 'number' ? parsed.status : response.status,
        detail: typeof parsed.detail === 'string' ? parsed.detail : undefined,
        invocationId: typeof parsed.invocationId === 'string' ? parsed.invocationId : undefined,
      };
    }
    if (isRecord(parsed) && typeof parsed.error === 'string') return { ...fallback, detail: parsed.error };
  }
  const snippet = oneLine(text).slice(0, 200);
  return snippet ? { ...fallback, detail: snippet } : fallback;
}
