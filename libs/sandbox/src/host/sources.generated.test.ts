import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

describe('the compiled connector globals', () => {
  it('match their sources in libs/sandbox/guest (run `npm run build` after changing them)', () => {
    const root = join(__dirname, '..', '..', '..', '..');
    expect(() => execFileSync(process.execPath, [join(root, 'tools', 'sandbox-globals.mjs'), '--check'], { cwd: root, stdio: 'pipe' })).not.toThrow();
  });
});
