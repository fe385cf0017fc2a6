import { RELEASE_VERSION } from '@gi/config';
import { writeLine } from './cli-io';
import type { CommandSpec } from './command';
import { COMPLETION_SHELLS, completionScript, type CompletionShell } from './completion';
import { fields, json } from './format';

/** What `gi version` reports: the release (package.json at build time; "dev" from sources) and where it runs. */
export const versionInfo = () => ({ version: RELEASE_VERSION, node: process.version, platform: `${process.platform}-${process.arch}` });

/** `gi version` and `gi completion`: about the CLI itself; the completion covers `table`, these included. */
export function builtinCommands(table: () => readonly CommandSpec[]): CommandSpec[] {
  const version: CommandSpec = {
    path: ['version'],
    summary: 'Show the release of gi, the Node.js version and the platform (also gi --version)',
    args: [],
    options: {},
    standalone: true,
    async run(ctx) {
      const info = versionInfo();
      if (ctx.json) return void writeLine(ctx.io.out, json(info));
      writeLine(ctx.io.out, fields([['gi', info.version], ['node', info.node], ['platform', info.platform]]));
    },
  };
  const completion: CommandSpec = {
    path: ['completion'],
    summary: 'Print the shell completion script for bash or zsh (commands, options, file names)',
    args: ['shell'],
    argValues: COMPLETION_SHELLS,
    options: {},
    standalone: true,
    details: [
      'bash: source <(gi completion bash)   in ~/.bashrc (or save it in /etc/bash_completion.d/gi)',
      'zsh:  source <(gi completion zsh)    in ~/.zshrc, after compinit',
    ].join('\n'),
    async run(ctx, input) {
      const shell = input.arg('shell');
      if (!COMPLETION_SHELLS.some((s) => s === shell)) throw input.usage(`<shell> must be ${COMPLETION_SHELLS.join(' or ')}, got "${shell}"`);
      const script = completionScript(shell as CompletionShell, table());
      writeLine(ctx.io.out, ctx.json ? json({ shell, script }) : script);
    },
  };
  return [version, completion];
}
