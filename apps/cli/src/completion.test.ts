import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWhere } from '@gi/testing';
import { captureIo } from './fake-service.fixture';
import { GLOBAL_OPTIONS } from './global-options';
import { ALL_COMMANDS, runCli } from './run-cli';
import { SERVICE_NAMES } from './service-names';

const noUp = async () => {
  throw new Error('not in tests');
};

async function script(shell: string): Promise<string> {
  const io = captureIo();
  // An invalid GI_URL does not matter: completion needs no settings.
  const code = await runCli(['completion', shell], io, { GI_URL: 'not a url' }, noUp);
  expect({ code, err: io.stderr() }).toEqual({ code: 0, err: '' });
  return io.stdout();
}

const bashUnavailable = spawnSync('bash', ['--version']).status === 0 ? undefined : 'bash is not installed';

describe('gi completion', () => {
  it.each(['bash', 'zsh'])('the %s script names every command, subcommand and option of the table', async (shell) => {
    const text = await script(shell);
    for (const spec of ALL_COMMANDS) {
      for (const word of spec.path) expect(text).toContain(word);
      expect(text).toContain(`'${spec.path.join(' ')}') echo '${[...Object.keys(spec.options), ...Object.keys(GLOBAL_OPTIONS)].map((o) => `--${o}`).join(' ')}'`);
    }
    for (const name of SERVICE_NAMES) expect(text).toMatch(new RegExp(`compgen -W '[^']*\\b${name}\\b`));
  });

  it('refuses a shell it has no script for', async () => {
    const io = captureIo();
    expect(await runCli(['completion', 'fish'], io, {}, noUp)).toBe(2);
    expect(io.stderr()).toBe(`error: <shell> must be bash or zsh, got "fish" (see 'gi completion --help')\n`);
  });

  describeWhere({ suite: 'bash', what: 'bash completion script run in bash', unavailable: bashUnavailable }, 'in bash', () => {
    let dir: string;
    let file: string;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gi-completion-'));
      file = join(dir, 'gi.bash');
      writeFileSync(file, await script('bash'));
      writeFileSync(join(dir, 'order.ts'), '');
      writeFileSync(join(dir, 'orders.json'), '');
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    /** The candidates bash offers with the cursor at the end of `line`. */
    function complete(line: string): string[] {
      const words = line.split(' ');
      const program = [
        `source ${JSON.stringify(file)}`,
        `COMP_WORDS=(${words.map((w) => JSON.stringify(w)).join(' ')})`,
        `COMP_CWORD=${words.length - 1}`,
        '_gi',
        'printf "%s\\n" "${COMPREPLY[@]}"',
      ].join('\n');
      const out = execFileSync('bash', ['--norc', '--noprofile', '-c', program], { cwd: dir, encoding: 'utf8' });
      return out.split('\n').filter(Boolean).sort();
    }

    it('is accepted by bash -n', () => {
      expect(spawnSync('bash', ['-n', file]).status).toBe(0);
    });

    it('completes commands, subcommands, options, files and argument values', () => {
      expect(complete('gi con')).toEqual(['connector', 'control']);
      expect(complete('gi connector d')).toEqual(['delete', 'deploy', 'diff']);
      expect(complete('gi --json connector deploy --ti')).toEqual(['--timeout']);
      expect(complete('gi connector deploy --bot acme --memory')).toEqual(['--memory-mib']);
      expect(complete('gi connector deploy order.')).toEqual(['order.ts']);
      expect(complete('gi connector run x.ts --request ord')).toEqual(['order.ts', 'orders.json']);
      expect(complete('gi connector deploy --bot ')).toEqual([]);
      expect(complete('gi completion ')).toEqual(['bash', 'zsh']);
      expect(complete('gi help tok')).toEqual(['token']);
      expect(complete('gi --ver')).toEqual(['--version']);
      expect(complete('gi invocations ')).toEqual(['cancel', 'event', 'list', 'show', 'steps']);
      expect(complete('gi invocations event --bot acme inv1 --bo')).toEqual(['--body', '--body-file', '--bot']);
      expect(complete('gi invocations event --body-file ord')).toEqual(['order.ts', 'orders.json']);
      expect(complete('gi invocations steps --b')).toEqual(['--before', '--bot']);
    });
  });
});
