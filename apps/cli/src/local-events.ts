import { isValidEventName, MAX_STEP_NAME_CHARS } from '@gi/domain';
import type { ConnectorRunRequest } from '@gi/domain';
import { UsageError } from './cli-errors';
import { readLocalFile } from './read-local-file';

type LocalEvent = NonNullable<ConnectorRunRequest['events']>[number];

/**
 * `--event name=<json>` or `--event name=@file` (a file of JSON), in the order given: the connector's
 * `Context.WaitForEvent(name)` calls receive them in that order, per name.
 */
export async function parseEventOptions(items: readonly string[], helpCommand: string): Promise<LocalEvent[]> {
  const events: LocalEvent[] = [];
  for (const item of items) {
    const at = item.indexOf('=');
    const name = at < 0 ? '' : item.slice(0, at);
    if (!isValidEventName(name)) {
      throw new UsageError(`--event "${item.slice(0, 80)}" must look like name=<JSON> or name=@file, the name 1 to ${MAX_STEP_NAME_CHARS} characters without control characters`, helpCommand);
    }
    const value = item.slice(at + 1);
    const text = value.startsWith('@') ? (await readLocalFile(value.slice(1), `--event ${name}`)).toString('utf8') : value;
    try {
      events.push({ name, payload: JSON.parse(text) });
    } catch (error) {
      throw new UsageError(`--event ${name}: the payload is not valid JSON (${(error as Error).message}); quote a text as JSON: ${name}='"text"'`, helpCommand);
    }
  }
  return events;
}
