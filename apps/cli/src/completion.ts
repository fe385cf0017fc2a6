import type { CommandSpec, OptionSpec, OptionSpecs } from './command';
import { GLOBAL_OPTIONS } from './global-options';
import { SERVICE_NAMES } from './service-names';

/** The shells `gi completion` writes a script for. */
export const COMPLETION_SHELLS = ['bash', 'zsh'] as const;
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

/** An option whose value is a file name: a placeholder F or FILE, or a name ending in -file. */
export const takesFile = (name: string, option: OptionSpec) => option.type === 'string' && (/^(F|FILE)$/.test(option.value ?? '') || name.endsWith('-file'));

/** What the script knows of the command table, all of it derived from the commands themselves. */
interface CompletionModel {
  topWords: string[];
  /** First word of a command group -> its second words. */
  groups: Map<string, string[]>;
  /** "connector deploy" -> its options (with the global ones) and whether its argument is a file. */
  commands: Array<{ key: string; options: string[]; fileArgument: boolean; argValues: readonly string[] }>;
  valueOptions: string[];
  fileOptions: string[];
}

const flags = (options: OptionSpecs) => Object.keys(options).map((name) => `--${name}`);

function modelOf(commands: readonly CommandSpec[]): CompletionModel {
  const groups = new Map<string, string[]>();
  for (const spec of commands) {
    if (spec.path.length > 1) groups.set(spec.path[0], [...(groups.get(spec.path[0]) ?? []), spec.path[1]]);
  }
  const topWords = [...new Set([...SERVICE_NAMES, 'help', ...commands.map((c) => c.path[0])])];
  const all: OptionSpecs = { ...GLOBAL_OPTIONS };
  for (const spec of commands) Object.assign(all, spec.options);
  const entries = Object.entries(all);
  return {
    topWords,
    groups,
    commands: commands.map((spec) => ({
      key: spec.path.join(' '),
      options: [...flags(spec.options), ...flags(GLOBAL_OPTIONS)],
      fileArgument: spec.args.includes('file'),
      argValues: spec.argValues ?? [],
    })),
    valueOptions: entries.filter(([, o]) => o.type === 'string').map(([name]) => `--${name}`),
    fileOptions: entries.filter(([name, o]) => takesFile(name, o)).map(([name]) => `--${name}`),
  };
}

/** Words of the command table are letters, digits and '-' only, so they need no quoting inside '...'. */
const words = (list: readonly string[]) => `'${list.join(' ')}'`;

/** The bash function `_gi`; zsh runs the same one through bashcompinit. */
function bashFunction(model: CompletionModel): string {
  const groupCases = [...model.groups].map(([group, subs]) => `    ${group}) echo ${words(subs)} ;;`);
  const optionCases = model.commands.map((c) => `    '${c.key}') echo ${words(c.options)} ;;`);
  const fileCases = model.commands.filter((c) => c.fileArgument).map((c) => `'${c.key}'`);
  const valueCases = model.commands.filter((c) => c.argValues.length > 0).map((c) => `    '${c.key}') echo ${words(c.argValues)} ;;`);
  return `# gi shell completion, generated from the command table by 'gi completion'.
_gi_subcommands() {
  case "$1" in
${groupCases.join('\n')}
  esac
}
_gi_options() {
  case "$1" in
${optionCases.join('\n')}
    *) echo ${words(flags(GLOBAL_OPTIONS))} ;;
  esac
}
_gi_argument_values() {
  case "$1" in
${valueCases.join('\n')}
  esac
}
_gi_value_options=' ${model.valueOptions.join(' ')} '
_gi_file_options=' ${model.fileOptions.join(' ')} '
_gi_files() {
  type compopt &>/dev/null && compopt -o filenames 2>/dev/null
  COMPREPLY=( $(compgen -f -- "$cur") )
}
_gi() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" i w skip=0 key subs
  local -a found=()
  (( COMP_CWORD > 1 )) && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  COMPREPLY=()
  # The words already typed, without the options and their values.
  for (( i = 1; i < COMP_CWORD; i++ )); do
    w="\${COMP_WORDS[i]}"
    if (( skip )); then skip=0; continue; fi
    if [[ "$_gi_value_options" == *" $w "* ]]; then skip=1; continue; fi
    [[ "$w" == -* ]] || found+=("$w")
  done
  if [[ -n "$prev" && "$_gi_value_options" == *" $prev "* ]]; then
    [[ "$_gi_file_options" == *" $prev "* ]] && _gi_files
    return 0
  fi
  if [[ "\${found[0]}" == help ]]; then found=("\${found[@]:1}"); fi
  if (( \${#found[@]} == 0 )); then
    if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "$(_gi_options '')" -- "$cur") ); else COMPREPLY=( $(compgen -W ${words(model.topWords)} -- "$cur") ); fi
    return 0
  fi
  subs="$(_gi_subcommands "\${found[0]}")"
  if [[ -n "$subs" ]]; then
    if (( \${#found[@]} == 1 )); then COMPREPLY=( $(compgen -W "$subs" -- "$cur") ); return 0; fi
    key="\${found[0]} \${found[1]}"
  else
    key="\${found[0]}"
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$(_gi_options "$key")" -- "$cur") )
    return 0
  fi
  case "$key" in
    ${fileCases.length > 0 ? fileCases.join('|') : "''"}) _gi_files ;;
    *) COMPREPLY=( $(compgen -W "$(_gi_argument_values "$key")" -- "$cur") ) ;;
  esac
  return 0
}`;
}

/** The completion script for a shell: sourced from ~/.bashrc or ~/.zshrc (see the README). */
export function completionScript(shell: CompletionShell, commands: readonly CommandSpec[]): string {
  const body = bashFunction(modelOf(commands));
  if (shell === 'bash') return `${body}\ncomplete -F _gi gi\n`;
  return `#compdef gi\n${body}\nautoload -U +X bashcompinit && bashcompinit\ncomplete -F _gi gi\n`;
}
