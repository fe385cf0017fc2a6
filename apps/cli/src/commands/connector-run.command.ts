import {
  allowedHostProblem,
  DEFAULT_CONNECTOR_LIMITS,
  DEFAULT_TIMEOUT_SECONDS,
  formatRequestHeaders,
  GiError,
  MAX_TIMEOUT_SECONDS,
  parseRequestBody,
  renderResponseBody,
  runLimitsOf,
} from '@gi/domain';
import type { ConnectorRunResult, LogLine } from '@gi/domain';
import { withoutByteOrderMark } from '@gi/http';
import { CliError } from '../cli-errors';
import { writeLine } from '../cli-io';
import type { CommandSpec } from '../command';
import { formatDuration, json } from '../format';
import { parseHeaderItems, parseQueryItems, readBody } from '../invoke/invoke-request';
import { parseEventOptions } from '../local-events';
import { localSecrets, parseSecretsFile, secretFromEnvironment } from '../local-secrets';
import { readLocalFile } from '../read-local-file';
import { overrideSample, readSampleRequest } from '../sample-request';
import { buildConnector } from '../connector-build';
import { compileErrorText } from './connector.commands';
import { limitOptions, readLimits } from './limit-options';

/**
 * `gi connector run`: runs a connector file locally, in the same sandbox as the service, against a
 * request built with the service's own entity rules. No server, no deploy.
 */
const HELP = 'gi connector run --help';

export const connectorRun: CommandSpec = {
  path: ['connector', 'run'],
  summary: 'Run a connector file (or a TypeScript entry, bundled as at deploy) locally, with no server: prints ResponseBody, logs and duration',
  args: ['file'],
  options: {
    request: { type: 'string', value: 'F', description: 'A saved sample request (JSON: query, headers, contentType, body); the options below override its parts' },
    body: { type: 'string', value: 'JSON', description: 'Request body (JSON unless --content-type says otherwise)' },
    'body-file': { type: 'string', value: 'F', description: "Request body read from a file (type from its extension), or from stdin with '-' (JSON by default)" },
    'content-type': { type: 'string', value: 'T', description: 'Content-Type of the body (default application/json)' },
    query: { type: 'string', multiple: true, value: 'k=v', description: "A query parameter for RequestParams; repeat for several (replaces the sample's values of that name)" },
    header: { type: 'string', multiple: true, value: "'Name: value'", description: "A request header for RequestHeaders; repeat for several (replaces the sample's header of that name)" },
    'response-content-type': { type: 'string', value: 'T', description: 'Render ResponseBody as this media type (default application/json)' },
    timeout: { type: 'string', value: 'SECONDS', description: `Wall-time limit, in seconds (default ${DEFAULT_TIMEOUT_SECONDS}, 1-${MAX_TIMEOUT_SECONDS})` },
    'allowed-host': { type: 'string', multiple: true, value: 'H', description: 'A host the connector may call through Context.Http; repeat for several' },
    'trust-loopback': {
      type: 'boolean',
      description: 'Let Context.Http reach this machine (127.0.0.0/8, ::1) for a local mock API; the host must still be an --allowed-host. No other private address',
    },
    'secrets-file': { type: 'string', value: 'F', description: 'Context.Secrets from a file: NAME=value lines (dotenv) or a JSON object' },
    'secret-env': { type: 'string', multiple: true, value: 'NAME', description: 'Context.Secrets.NAME from the environment variable NAME; repeat for several (wins over --secrets-file)' },
    'skip-sleeps': {
      type: 'boolean',
      description: 'End every Context.Sleep, SleepUntil and retry delay at once, and every Context.WaitForEvent (with the next --event of its name, else null)',
    },
    event: {
      type: 'string',
      multiple: true,
      value: 'name=JSON',
      description: 'An event for Context.WaitForEvent(name): its JSON payload, or @file for a file of it; repeat for several (received in order, per name)',
    },
    ...limitOptions,
  },
  details: [
    'The reply body goes to stdout; logs, duration and errors to stderr. Exits 1 when the run raises, throws or breaks a limit.',
    'Context.Http reaches public addresses only, as in the service; CONNECTOR_TRUSTED_ADDRESSES is honoured as the service does.',
    'A sample request file: {"query": {"source": "crm"} or "source=crm", "headers": {"X-Trace": "t1"}, "contentType": "application/json", "body": {"orderId": 42}};',
    'every field optional, a string body is sent as text exactly as given (see docs/connectors.md, "Trying a connector locally").',
    "Example: gi connector run examples/connectors/ack.js --body '{\"orderId\": 42}' --query source=crm",
    'Example: gi connector run src/index.ts --request samples/order.json   (a project from gi connector init)',
    'Example: gi connector run call-api.js --request samples/order.json --allowed-host 127.0.0.1:4010 --trust-loopback',
    'Secret values are replaced by [secret] in the logs and errors printed, as in the service.',
    'Durable calls run as in the service, with a journal kept for the run alone: Context.Step runs each step once per name and occurrence (retries included),',
    'Context.Sleep and Context.WaitForEvent really wait (nothing is suspended locally) unless --skip-sleeps is given; WaitForEvent gets the --event of its name.',
    'Example: gi connector run campaign.js --skip-sleeps --event delivery-report=\'{"delivered": 42}\' --event approval=@approval.json',
    'Example: cat order.json | gi connector run ack.js --body-file -',
    'Example: CRM_API_KEY=... gi connector run crm.js --secret-env CRM_API_KEY --secrets-file .secrets.env',
  ].join('\n'),
  async run(ctx, input) {
    const file = input.arg('file');
    const { code, sources } = await buildConnector(file);
    const timeoutSeconds = input.int('timeout', 1, MAX_TIMEOUT_SECONDS) ?? DEFAULT_TIMEOUT_SECONDS;
    const limits = runLimitsOf({ ...DEFAULT_CONNECTOR_LIMITS, ...readLimits(input) });
    const mediaType = input.string('response-content-type') ?? 'application/json';
    const allowedHosts = input.list('allowed-host');
    for (const host of allowedHosts) {
      const problem = allowedHostProblem(host);
      if (problem) throw new CliError(`--allowed-host: ${problem}`);
    }
    // The options are checked before stdin is read, so a mistake does not wait for input first.
    const query = parseQueryItems(input.list('query'), HELP);
    const headers = parseHeaderItems(input.list('header'), HELP);
    const secretsFile = input.string('secrets-file');
    const secrets = localSecrets(
      secretsFile === undefined ? [] : parseSecretsFile((await readLocalFile(secretsFile, '--secrets-file')).toString('utf8'), secretsFile),
      input.list('secret-env').map((name) => secretFromEnvironment(name, ctx.environment)),
    );
    const events = await parseEventOptions(input.list('event'), HELP);
    const sampleFile = input.string('request');
    const sample = sampleFile ? await readSampleRequest(sampleFile, HELP) : undefined;
    const given = {
      ...(await readBody(
        { body: input.string('body'), bodyFile: input.string('body-file'), contentType: input.string('content-type') },
        { readStdin: () => ctx.io.readStdin(), helpCommand: HELP },
      )),
      query,
      headers,
    };
    const request = sample ? overrideSample(sample, given) : given;
    const { body, contentType } = request;

    let entity;
    // The body as the service would keep it for Context.GetRawRequestBody.
    const rawBody = body?.toString('utf8') ?? '';
    try {
      const rawHeaders = [...(contentType ? [['Content-Type', contentType]] : []), ...request.headers].flat();
      entity = {
        RequestParams: new URLSearchParams(request.query).toString(),
        RequestHeaders: formatRequestHeaders(rawHeaders),
        RequestBody: parseRequestBody(contentType, withoutByteOrderMark(rawBody)),
        ResponseBody: null,
      };
    } catch (error) {
      if (error instanceof GiError) throw new CliError(`the request is not valid: ${error.detail}`);
      throw error;
    }

    // Loaded here so other commands start without the sandbox.
    const { createQuickJsRuntime } = await import('@gi/sandbox');
    const trustLoopback = input.flag('trust-loopback');
    const runtime = await createQuickJsRuntime({
      workers: 0,
      http: {
        trustedAddresses: [...ctx.connectorTrustedAddresses],
        trustLoopback,
        loopbackHint: trustLoopback ? '' : 'To reach a mock API on this machine, run gi connector run with --trust-loopback.',
      },
    });
    const printLog = (line: LogLine) => writeLine(ctx.io.err, `[${line.level}] ${line.message}`);
    let result: ConnectorRunResult;
    try {
      const compiled = runtime.compile(code);
      if (!compiled.ok) throw new CliError(compileErrorText(file, compiled.line, compiled.column, compiled.message, sources.length > 0));
      result = await runtime.run({
        cacheKey: `local/${file}`,
        code,
        entity,
        rawBody,
        secrets,
        timeoutMs: timeoutSeconds * 1000,
        limits,
        allowedHosts,
        onProgress: (p) => writeLine(ctx.io.err, `progress ${p.percent}%${p.message ? ` ${p.message}` : ''}`),
        // Lines logged while a long run goes on are shown as they come (with --json, all come with the result).
        onLogs: ctx.json ? undefined : (lines) => lines.forEach(printLog),
        // No store: steps are journalled in memory for this run alone, and sleeps wait here unless skipped.
        sleeps: input.flag('skip-sleeps') ? 'skip' : 'wait',
        events,
      });
    } finally {
      await runtime.close();
    }

    if (ctx.json) {
      writeLine(ctx.io.out, json(result));
    } else {
      result.logs.forEach(printLog);
      writeLine(ctx.io.err, `duration ${formatDuration(result.durationMs)}`);
      if (result.kind === 'ok') writeLine(ctx.io.out, renderResponseBody(result.responseBody, mediaType).payload);
    }
    if (result.kind === 'raised') throw new CliError(`RaiseError: ${result.title}: ${result.message} (the caller would get 422)`);
    if (result.kind === 'failed') throw new CliError(`${result.reason === 'timeout' ? 'timed out' : 'failed'}: ${result.message}`);
    // A run without a journal never suspends; should one, it must not pass for a success.
    if (result.kind === 'suspended') throw new CliError(`suspended: ${result.wait.kind} '${result.wait.name}' until ${new Date(result.wait.until).toISOString()}`);
  },
};
