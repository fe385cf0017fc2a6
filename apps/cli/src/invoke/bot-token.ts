import type { ControlClient } from '../control-client';

/** How long a token the CLI mints for a call of the public API lives. */
export const MINTED_TOKEN_TTL_SECONDS = 600;

/**
 * The bot token `gi invoke` calls with: the one given by --token, or a short-lived one minted
 * through the control API. A minted token is minted again if it expires during a long poll.
 */
export class BotToken {
  private current: string | undefined;

  constructor(
    given: string | undefined,
    private readonly mint: (() => Promise<string>) | null,
  ) {
    this.current = given;
  }

  get renewable(): boolean {
    return this.mint !== null;
  }

  async get(): Promise<string> {
    if (this.current === undefined) this.current = await this.renew();
    return this.current;
  }

  async renew(): Promise<string> {
    if (this.mint === null) throw new Error('this token cannot be renewed');
    this.current = await this.mint();
    return this.current;
  }
}

/** The token a call of the public API goes with: the one given (--token), else one minted through the control API, labelled `label`. */
export function botTokenFor(control: Pick<ControlClient, 'createToken'>, botId: string, given: string | undefined, label: string): BotToken {
  const mint = async () => (await control.createToken(botId, { ttlSeconds: MINTED_TOKEN_TTL_SECONDS, label })).token;
  return new BotToken(given, given === undefined ? mint : null);
}
