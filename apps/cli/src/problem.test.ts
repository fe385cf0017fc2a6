import { describeProblem, readProblem } from './problem';

const response = (status: number, body: string, contentType: string) =>
  new Response(body, { status, statusText: status === 502 ? 'Bad Gateway' : '', headers: { 'content-type': contentType } });

describe('problem details', () => {
  it('reads a problem document with its extra members', async () => {
    const problem = await readProblem(
      response(400, JSON.stringify({ type: 'about:blank', title: 'Bad request', status: 400, detail: 'Unexpected token', line: 3, column: 7 }), 'application/problem+json'),
    );
    expect(problem).toMatchObject({ title: 'Bad request', status: 400, detail: 'Unexpected token', line: 3, column: 7 });
  });

  it('summarizes error responses that are not problem documents', async () => {
    expect(await readProblem(response(502, '<html>\n  upstream\n  down</html>', 'text/html'))).toEqual({
      title: 'HTTP 502 Bad Gateway',
      status: 502,
      detail: '<html> upstream down</html>',
    });
    expect(await readProblem(response(500, '', 'text/plain'))).toEqual({ title: 'HTTP 500', status: 500 });
  });

  it('describes a problem on one line with its invocation', () => {
    expect(describeProblem({ title: 'Missing entity', status: 422, detail: 'The request\nentity is null', invocationId: 'inv1' })).toBe(
      'Missing entity: The request entity is null (invocation inv1)',
    );
    expect(describeProblem({ title: 'Not found', status: 404, detail: 'Not found' })).toBe('Not found');
  });
});
