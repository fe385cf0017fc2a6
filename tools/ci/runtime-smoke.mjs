// Proves the running Node can load the two engines the service cannot work without: the native
// better-sqlite3 addon (built for this Node's ABI) and the QuickJS WebAssembly sandbox.
import Database from 'better-sqlite3';
import { getQuickJS } from 'quickjs-emscripten';

const db = new Database(':memory:');
const { sqlite } = db.prepare('select sqlite_version() as sqlite').get();
db.close();

const quickjs = await getQuickJS();
const vm = quickjs.newContext();
const handle = vm.unwrapResult(vm.evalCode('[1, 2, 3].map((x) => x * 2).join(",")'));
const evaluated = vm.getString(handle);
handle.dispose();
vm.dispose();
if (evaluated !== '2,4,6') throw new Error(`QuickJS evaluated to ${evaluated}, expected 2,4,6`);

console.log(`node ${process.version} (ABI ${process.versions.modules}): better-sqlite3 ok (SQLite ${sqlite}), quickjs ok`);
