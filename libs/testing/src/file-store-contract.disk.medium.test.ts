import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiskFileStore } from '@gi/files-disk';
import { describeFileStoreContract } from './file-store.contract';

describeFileStoreContract('local disk', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gi-files-'));
  return {
    files: new DiskFileStore(join(dir, 'files')),
    async leftovers() {
      return readdirSync(dir, { recursive: true, withFileTypes: true }).map((e) => join(e.parentPath, e.name).slice(dir.length + 1) + (e.isDirectory() ? '/' : ''));
    },
    async dispose() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
