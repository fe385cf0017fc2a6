import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { InProcessReply } from '@gi/http';
import { describeWhere } from '@gi/testing';
import { ADMIN_TOKEN, ServicesFixture } from './services.fixture';

/**
 * One bot filling the disk, on a real small file system: the uploaded files of
 * the embedded service live on a 16 MiB tmpfs (mounted as root; where it cannot be mounted one SKIPPED
 * line says so and the tests do not run, or fail with REQUIRE_SUITES=tmpfs; `apps/gateway/src/receive-files.test.ts` injects the disk errors at the
 * file-store port instead). Each bot may hold 3 MiB (BOT_STORAGE_QUOTA) and uploads leave 4 MiB free
 * (STORAGE_FREE_RESERVE): past either, 507, never an errno, and the other bots go on.
 */

const MiB = 1024 ** 2;
const RESERVE = 4 * MiB;
const fixture = new ServicesFixture({ BOT_STORAGE_QUOTA: '3mb', STORAGE_FREE_RESERVE: '4mb' });
const filesDir = join(fixture.dir, 'files');
const mounted = mountTmpfs(filesDir, '16m');
const service = () => fixture.service('embedded');
const boundary = 'b0undary';

function mountTmpfs(dir: string, size: string): boolean {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

afterAll(async () => {
  if (mounted) execFileSync('umount', [filesDir]);
  await fixture.close();
});

const json = (reply: InProcessReply) => JSON.parse(reply.body) as Record<string, unknown>;
const upload = (botId: string, token: string, bytes: number) =>
  service().call({
    method: 'POST',
    path: `/api/Platform/${botId}/Order/ack/GenericIntegrationFileTransfer?asyncResponse=true`,
    headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body: Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="f"; filename="f.bin"\r\n\r\n`), Buffer.alloc(bytes, 7), Buffer.from(`\r\n--${boundary}--\r\n`)]),
  });
const freeBytes = () => {
  const { bavail, bsize } = statfsSync(filesDir);
  return bavail * bsize;
};
const botFiles = (botId: string) => (existsSync(join(filesDir, botId)) ? readdirSync(join(filesDir, botId)) : []);

/** A 507 problem that names no errno. */
function expectInsufficientStorage(reply: InProcessReply): void {
  expect([reply.status, json(reply).type]).toEqual([507, 'urn:gi:problem:insufficient-storage']);
  expect(reply.body).not.toMatch(/E(NOSPC|IO|DQUOT|ROFS)/);
}

describeWhere(
  { suite: 'tmpfs', what: 'disk-fill security suite', unavailable: mounted ? undefined : 'a tmpfs cannot be mounted here (needs root)', runsWhen: 'runs as root' },
  'a bot filling the disk (a 16 MiB tmpfs)',
  () => {
    const tokens: Record<string, string> = {};
    beforeAll(async () => {
      await fixture.start();
      for (const bot of ['filler', 'other', 'r1', 'r2', 'r3', 'r4', 'r5']) tokens[bot] = (await fixture.setUpBot(bot)).token;
    });

    it('stops a bot at its storage quota with 507 while another bot uploads', async () => {
      const replies = [];
      for (let i = 0; i < 3; i++) replies.push(await upload('filler', tokens.filler, MiB));
      // Two files fit in 3 MiB; the third passes it while it is sent, and nothing of it is kept.
      expect(replies.map((r) => r.status)).toEqual([202, 202, 507]);
      expectInsufficientStorage(replies[2]);
      expect(botFiles('filler')).toHaveLength(2);
      // What is left of the quota can still be used.
      expect((await upload('filler', tokens.filler, 10)).status).toBe(202);
      expect((await upload('other', tokens.other, MiB)).status).toBe(202);
    });

    it('keeps the free-space reserve whoever uploads: 507 once the disk is down to it, and the disk never fuller', async () => {
      const answers: number[] = [];
      for (const bot of ['r1', 'r2', 'r3', 'r4', 'r5']) {
        const reply = await upload(bot, tokens[bot], 2 * MiB);
        answers.push(reply.status);
        if (reply.status !== 202) expectInsufficientStorage(reply);
      }
      // 16 MiB less the 3 MiB stored and the 4 MiB reserve: four of the five 2 MiB uploads fit.
      expect(answers).toEqual([202, 202, 202, 202, 507]);
      expect(freeBytes()).toBeGreaterThanOrEqual(RESERVE - 64 * 1024);
      // A call without files is not concerned.
      const text = await service().call({ method: 'POST', path: '/api/Platform/r5/Order/ack/GenericIntegration?asyncResponse=true', headers: { authorization: `Bearer ${tokens.r5}`, 'content-type': 'application/json' }, body: '{}' });
      expect(text.status).toBe(202);
    });

    it('deletes a bot on a full disk with 200 and frees its files at once', async () => {
      // Fill what is left, as another writer on the disk would.
      const filler = join(filesDir, 'outside');
      writeFileSync(filler, Buffer.alloc(Math.max(0, freeBytes() - 4096), 1));
      try {
        const deleted = await service().call({ method: 'DELETE', path: '/admin/bots/filler?force=true', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        expect(deleted.status).toBe(200);
        expect(botFiles('filler')).toEqual([]);
        expect(freeBytes()).toBeGreaterThanOrEqual(2 * MiB);
      } finally {
        rmSync(filler, { force: true });
      }
    });
  },
);
