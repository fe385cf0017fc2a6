import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FileOwner, Store } from '@gi/domain';
import { sweepFiles } from './sweep-files';
import { DiskFileStore } from '@gi/files-disk';
import { createSqliteStore } from '@gi/store-sqlite';
import { newInvocation, ManualClock } from '@gi/testing';

async function* bytes(text: string): AsyncGenerator<Uint8Array> {
  yield Buffer.from(text);
}

describe('sweepFiles (SQLite store, files on disk): files expire with their invocation', () => {
  let dir: string;
  let clock: ManualClock;
  let store: Store;
  let files: DiskFileStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gi-sweep-'));
    clock = new ManualClock();
    store = createSqliteStore(join(dir, 'store.db'), clock);
    files = new DiskFileStore(join(dir, 'files'));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const upload = async (owner: FileOwner) => (await files.write(owner, bytes(`file of ${owner.id}`))).id;
  const soon = () => Date.now() + 60_000;

  it('deletes the files of expired and deleted invocations and of uploads never stored, and keeps the rest', async () => {
    const live = newInvocation({ createdAt: clock.now(), expireAt: clock.now() + 2 * 3600_000 });
    const expiring = newInvocation({ createdAt: clock.now(), expireAt: clock.now() + 3600_000 });
    const deleted = newInvocation({ createdAt: clock.now(), expireAt: clock.now() + 1000 });
    for (const inv of [live, expiring, deleted]) await store.invocations.create(inv);
    const liveFile = await upload(live);
    const expiringFile = await upload(expiring);
    await upload(deleted);
    const orphan = await upload({ botId: 'bot-a', id: 'never-stored' });

    clock.advance(2000);
    expect(await store.invocations.deleteExpired(clock.now())).toBe(1);
    expect(await sweepFiles({ files, invocations: store.invocations }, soon())).toEqual({ owners: 2, abandoned: 0 });
    expect(await files.read({ botId: 'bot-a', id: 'never-stored' }, orphan)).toBeNull();
    expect(await files.read(expiring, expiringFile)).not.toBeNull();

    // Past its expiry the store no longer gives the invocation out, even before it is deleted.
    clock.advance(3600_000);
    expect(await sweepFiles({ files, invocations: store.invocations }, soon())).toEqual({ owners: 1, abandoned: 0 });
    expect(await files.read(expiring, expiringFile)).toBeNull();
    expect(Buffer.from((await files.read(live, liveFile))!).toString()).toBe(`file of ${live.id}`);
    expect(await files.listOwners(soon())).toEqual([{ botId: live.botId, id: live.id }]);
  });

  it('leaves files written after the cut-off alone: their upload may still be running', async () => {
    await upload({ botId: 'bot-a', id: 'uploading' });
    expect(await sweepFiles({ files, invocations: store.invocations }, Date.now() - 60_000)).toEqual({ owners: 0, abandoned: 0 });
    expect(await files.listOwners(soon())).toEqual([{ botId: 'bot-a', id: 'uploading' }]);
  });
});
