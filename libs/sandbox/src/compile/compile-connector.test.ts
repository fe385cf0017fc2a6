import { ConnectorCompiler } from './compile-connector';
import { resolveEnvironment } from '../sandbox-environment';

describe('ConnectorCompiler', () => {
  it('refuses code on which the engine itself fails, and goes on with a spare engine', async () => {
    const compiler = await ConnectorCompiler.create(resolveEnvironment({}, false));
    try {
      // The engine in use fails the way an exhausted native stack does.
      const engine = (compiler as unknown as { engine: { compile: (code: string) => unknown } }).engine;
      engine.compile = () => {
        throw new RangeError('Maximum call stack size exceeded');
      };
      expect(compiler.compile('1')).toEqual({ ok: false, message: 'SyntaxError: the code nests too deeply to be compiled (stack overflow)', line: 1, column: 1 });
      expect(compiler.compile('return 1;')).toEqual({ ok: true });
      expect(compiler.compile('let x = ;')).toMatchObject({ ok: false, line: 1 });
    } finally {
      compiler.dispose();
    }
  });
});
