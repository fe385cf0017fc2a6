import { createHash, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, statfs } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { ByteRange, FileOwner, FileStore, StoredFile } from '@gi/domain';

/** Ids this store generates (UUIDs); anything else can never name one of its files. */
const FILE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Bot and invocation ids become directory names: plain names only, never '.' or '..'. */
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const PARTIAL = '.part';

/**
 * Files on local disk: `<root>/<botId>/<invocationId>/<fileId>`, names generated here (the client's
 * file name is never part of a path). A file is written as `<fileId>.part`, synced, then renamed, so a
 * reader never sees a partial file; the directory is synced too, so the name survives a crash.
 * Several processes on one host may share the root (gateway writes, executors read and sweep).
 */
export class DiskFileStore implements FileStore {
  constructor(private readonly root: string) {}

  async write(owner: FileOwner, source: AsyncIterable<Uint8Array>): Promise<StoredFile> {
    const dir = this.dirOf(owner);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const id = randomUUID();
    const partial = join(dir, id + PARTIAL);
    const file = await open(partial, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    const hash = createHash('sha256');
    let size = 0;
    try {
      for await (const chunk of source) {
        hash.update(chunk);
        size += chunk.byteLength;
        await writeAll(file, chunk);
      }
      await file.sync();
      await file.close();
      await rename(partial, join(dir, id));
      await syncDirectory(dir);
    } catch (error) {
      await file.close().catch(() => undefined);
      await rm(partial, { force: true });
      throw error;
    }
    return { id, size, sha256: hash.digest('hex') };
  }

  async read(owner: FileOwner, id: string, range?: ByteRange): Promise<Uint8Array | null> {
    if (range && !(Number.isSafeInteger(range.offset) && range.offset >= 0 && Number.isSafeInteger(range.length) && range.length >= 0)) {
      throw new RangeError(`Invalid byte range ${JSON.stringify(range)}.`);
    }
    if (!FILE_ID.test(id)) return null;
    let file: FileHandle;
    try {
      file = await open(join(this.dirOf(owner), id), 'r');
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    try {
      const { size } = await file.stat();
      const offset = Math.min(range?.offset ?? 0, size);
      const length = Math.min(range?.length ?? size, size - offset);
      const buffer = Buffer.alloc(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await file.read(buffer, done, length - done, offset + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return done === length ? buffer : buffer.subarray(0, done);
    } finally {
      await file.close();
    }
  }

  async delete(owner: FileOwner, id: string): Promise<boolean> {
    if (!FILE_ID.test(id)) return false;
    try {
      await rm(join(this.dirOf(owner), id));
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  async deleteAll(owner: FileOwner): Promise<void> {
    await rm(this.dirOf(owner), { recursive: true, force: true });
  }

  async deleteBot(botId: string): Promise<void> {
    await rm(this.botDir(botId), { recursive: true, force: true });
  }

  async usedBytes(botId: string): Promise<number> {
    let bytes = 0;
    const bot = this.botDir(botId);
    for (const id of await entries(bot)) {
      for (const name of await entries(join(bot, id))) bytes += (await stat(join(bot, id, name)).catch(() => null))?.size ?? 0;
    }
    return bytes;
  }

  async freeBytes(): Promise<number> {
    await mkdir(this.root, { recursive: true });
    const { bavail, bsize } = await statfs(this.root);
    return bavail * bsize;
  }

  async listOwners(before: number): Promise<FileOwner[]> {
    const owners: FileOwner[] = [];
    for (const botId of await entries(this.root)) {
      if (!SEGMENT.test(botId)) continue;
      for (const id of await entries(join(this.root, botId))) {
        if (SEGMENT.test(id) && (await lastWrite(join(this.root, botId, id))) < before) owners.push({ botId, id });
      }
    }
    return owners;
  }

  private botDir(botId: string): string {
    if (!SEGMENT.test(botId)) throw new Error(`Invalid bot id ${JSON.stringify(botId)}.`);
    return join(this.root, botId);
  }

  private dirOf(owner: FileOwner): string {
    if (!SEGMENT.test(owner.botId) || !SEGMENT.test(owner.id)) throw new Error(`Invalid file owner ${JSON.stringify(owner)}.`);
    return join(this.root, owner.botId, owner.id);
  }
}

async function writeAll(file: FileHandle, chunk: Uint8Array): Promise<void> {
  let done = 0;
  while (done < chunk.byteLength) done += (await file.write(chunk, done, chunk.byteLength - done)).bytesWritten;
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The latest modification time of a directory and the files in it (a file being written keeps it fresh). */
async function lastWrite(dir: string): Promise<number> {
  let latest = 0;
  try {
    latest = (await stat(dir)).mtimeMs;
    for (const name of await entries(dir)) {
      const info = await stat(join(dir, name)).catch(() => null);
      if (info) latest = Math.max(latest, info.mtimeMs);
    }
  } catch (error) {
    if (!isMissing(error)) throw error;
    return Number.POSITIVE_INFINITY;
  }
  return latest;
}

async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
}

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException)?.code === 'ENOENT';
