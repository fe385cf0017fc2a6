import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, ROOT, startService } from './service-process';
import type { ServiceProcess } from './service-process';

/** A command of the README's block and the output the README shows under it, if any. */
interface Step {
  command: string;
  shown: string | null;
}

/**
 * The TypeScript block of the README's quickstart: its commands (continuation lines joined, comments
 * dropped) and, for a command followed by a `# {...}` line, that line as the output it must print.
 */
function quickstartTypeScriptSteps(readme: string): Step[] {
  const after = readme.slice(readme.indexOf('Your own connector in TypeScript'));
  const block = /```sh\n([\s\S]*?)```/.exec(after)?.[1];
  if (!block) throw new Error('README.md: no sh block after "Your own connector in TypeScript"');
  const steps: Step[] = [];
  const lines = block.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^# \{/.test(line)) {
      const last = steps[steps.length - 1];
      if (!last || last.shown !== null) throw new Error(`README.md: output shown with no command before it: ${line}`);
      last.shown = line.slice(2);
      continue;
    }
    if (line.trim() === '' || line.startsWith('#')) continue;
    let command = line;
    while (command.endsWith('\\')) command = `${command}\n${lines[++i]}`;
    steps.push({ command: command.replace(/\s+#[^'"]*$/, ''), shown: null });
  }
  return steps;
}

/**
 * The steps as one bash script: each command as written, after a line that marks where its output
 * starts; a command run in the background is waited for until the port it listens on answers.
 */
function script(steps: Step[]): string {
  const body = steps.flatMap(({ command }, index) => {
    const out = [`echo "@@step ${index}"`, command];
    const port = /&$/.test(command.trim()) ? /listen\((\d+)\)/.exec(command)?.[1] : undefined;
    if (port) out.push(`for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && break; sleep 0.1; done`);
    return out;
  });
  return ['set -euo pipefail', 'gi() { node "$CLI" "$@"; }', ...body, 'echo "@@end"'].join('\n');
}

/**
 * The README's quickstart, TypeScript path, run as it stands against the built embedded service
 * with the built `gi`: so the README cannot drift from what the product does.
 */
describe('README quickstart, TypeScript path (built CLI against the embedded service)', () => {
  let service: ServiceProcess;
  let work: string;
  beforeAll(async () => {
    // As in the quickstart: the service makes its admin token, and gi finds it in DATA_DIR.
    service = await startService({ env: { ADMIN_TOKEN: '' } });
    work = mkdtempSync(join(tmpdir(), 'gi-quickstart-'));
  });
  afterAll(async () => {
    await service?.dispose();
    rmSync(work, { recursive: true, force: true });
  });

  it('reads the steps of the README: init, an edit, a local run against a mock, deploy, a call', () => {
    const commands = quickstartTypeScriptSteps(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((s) => s.command.split(' ').slice(0, 3).join(' '));
    expect(commands).toEqual([
      'gi connector init',
      'sed -i "s/Status:',
      'node -e "require(\'node:http\').createServer((req,',
      'ORDERS_API=http://127.0.0.1:4010 gi connector',
      'kill %1',
      'gi connector deploy',
      'gi connector show',
      'gi invoke --bot',
    ]);
  });

  it('runs every command of it, each printing the output the README shows', async () => {
    const steps = quickstartTypeScriptSteps(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    const env = { PATH: process.env.PATH, HOME: work, CLI, GI_URL: service.baseUrl, DATA_DIR: service.dataDir };
    // The quickstart's first block defines the entity.
    const setup = await bash('gi() { node "$CLI" "$@"; }\ngi entity create acme Order', env, work);
    expect(setup.code).toBe(0);

    const run = await bash(script(steps), env, work);
    expect({ code: run.code, stderr: run.code === 0 ? '' : run.err, out: run.code === 0 ? '' : run.out }).toEqual({ code: 0, stderr: '', out: '' });
    const outputs = run.out.split(/^@@step \d+\n/m).slice(1);
    expect(outputs).toHaveLength(steps.length);
    outputs[outputs.length - 1] = outputs[outputs.length - 1].replace(/@@end\n$/, '');
    const shown = steps.flatMap((step, i) => (step.shown === null ? [] : [{ command: step.command, output: outputs[i].trim() }]));
    expect(shown).toEqual(steps.filter((s) => s.shown !== null).map((s) => ({ command: s.command, output: s.shown })));
    expect(shown).toHaveLength(2);
  }, 90_000);
});

/**
 * Runs a bash script in its own process group, which is ended once bash exits (a mock left behind by
 * a failed step included), or after 80 s.
 */
function bash(text: string, env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', text], { cwd, env, detached: true });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    const endGroup = () => {
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {
        // the group is gone already
      }
    };
    const timer = setTimeout(endGroup, 80_000);
    child.on('exit', () => {
      clearTimeout(timer);
      endGroup();
    });
    child.on('close', (code) => resolve({ code, out, err }));
  });
}
