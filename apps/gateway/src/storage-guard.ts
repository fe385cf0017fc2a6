import { GiError } from '@gi/domain';
import type { FileStore } from '@gi/domain';

/** What uploaded files may take of the disk (BOT_STORAGE_QUOTA, STORAGE_FREE_RESERVE). */
export interface StorageLimits {
  /** The bytes of uploaded files one bot may hold. */
  botQuotaBytes: number;
  /** The free space no upload may take: what the store, its log and the other bots keep. */
  freeReserveBytes: number;
}

/** How long a bot's measured bytes, and the disk's free bytes, are trusted before they are measured again. */
const BOT_MEASURE_MS = 5000;
const FREE_MEASURE_MS = 1000;

interface BotUsage {
  /** Its files' bytes as last measured, plus what this process stored since. */
  used: number;
  measuredAt: number;
  /** Bytes of its uploads being received now. */
  receiving: number;
}

/**
 * Keeps uploads within each bot's storage quota and above the disk's free-space reserve, checked
 * before an upload's body is read (507 at once) and again with every chunk it sends (507 as soon as
 * it would pass either). A bot's bytes are measured in the file store (at most every 5 s) and counted
 * in between from what this process receives and stores; the free space is measured at most every
 * second, and what is being received since is taken off it. Several gateways each count their own
 * uploads between measurements.
 */
export class StorageGuard {
  private readonly bots = new Map<string, BotUsage>();
  private free: { bytes: number; measuredAt: number; takenSince: number } | null = null;

  constructor(
    private readonly files: Pick<FileStore, 'usedBytes' | 'freeBytes'>,
    readonly limits: StorageLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Starts an upload of the bot: refused (507) when the bot holds its quota or the disk is down to its reserve. */
  async open(botId: string): Promise<UploadSpace> {
    const usage = await this.usage(botId);
    if (usage.used + usage.receiving >= this.limits.botQuotaBytes) throw quotaReached(botId, this.limits);
    if (!(await this.freeAbove(0))) throw diskLow();
    return new UploadSpace(this, botId, usage);
  }

  /** Takes `bytes` more of an upload of `usage`'s bot; false (nothing taken) when that passes the quota or the reserve. */
  take(usage: BotUsage, bytes: number): boolean {
    if (usage.used + usage.receiving + bytes > this.limits.botQuotaBytes) return false;
    if (this.free && this.free.bytes - this.free.takenSince - bytes < this.limits.freeReserveBytes) return false;
    usage.receiving += bytes;
    if (this.free) this.free.takenSince += bytes;
    return true;
  }

  private async usage(botId: string): Promise<BotUsage> {
    let usage = this.bots.get(botId);
    if (!usage) this.bots.set(botId, (usage = { used: 0, measuredAt: -Infinity, receiving: 0 }));
    if (this.now() - usage.measuredAt >= BOT_MEASURE_MS) {
      // Uploads being received are partly on disk already: counted once, as receiving.
      usage.used = Math.max(0, (await this.files.usedBytes(botId)) - usage.receiving);
      usage.measuredAt = this.now();
    }
    return usage;
  }

  private async freeAbove(bytes: number): Promise<boolean> {
    if (!this.files.freeBytes) return true;
    if (!this.free || this.now() - this.free.measuredAt >= FREE_MEASURE_MS) {
      this.free = { bytes: await this.files.freeBytes(), measuredAt: this.now(), takenSince: 0 };
    }
    return this.free.bytes - this.free.takenSince - bytes >= this.limits.freeReserveBytes;
  }

  /** Why a chunk was refused. */
  refusal(usage: BotUsage, botId: string, bytes: number): GiError {
    return usage.used + usage.receiving + bytes > this.limits.botQuotaBytes ? quotaReached(botId, this.limits) : diskLow();
  }
}

/** One upload's share: what it took, returned when it ends. */
export class UploadSpace {
  private taken = 0;
  private ended = false;

  constructor(
    private readonly guard: StorageGuard,
    private readonly botId: string,
    private readonly usage: BotUsage,
  ) {}

  /** Takes the next `bytes` of the upload; the refusal (507) when they pass the quota or the reserve. */
  take(bytes: number): GiError | null {
    if (this.guard.take(this.usage, bytes)) {
      this.taken += bytes;
      return null;
    }
    return this.guard.refusal(this.usage, this.botId, bytes);
  }

  /** The upload ended: its bytes now count as the bot's files when they were stored, else not at all. */
  end(stored: boolean): void {
    if (this.ended) return;
    this.ended = true;
    this.usage.receiving -= this.taken;
    if (stored) this.usage.used += this.taken;
  }
}

export const quotaReached = (botId: string, limits: StorageLimits) =>
  new GiError(
    'insufficient_storage',
    'Insufficient storage',
    `Bot '${botId}' holds its storage quota of ${limits.botQuotaBytes} bytes of uploaded files (BOT_STORAGE_QUOTA); files are freed when their invocations expire or the bot is deleted. Nothing was stored.`,
  );

/** The disk is down to its reserve (or full): the caller may try again later. */
export const diskLow = () =>
  new GiError('insufficient_storage', 'Insufficient storage', 'The service is low on disk space for uploaded files; nothing was stored. Try again later.', {
    headers: { 'Retry-After': '60' },
  });
