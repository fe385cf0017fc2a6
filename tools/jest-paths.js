// Maps tsconfig path aliases (@gi/*) to sources for jest, so tests run the TypeScript directly.
const { compilerOptions } = require('../tsconfig.base.json');

exports.pathsToModuleNameMapper = () =>
  Object.fromEntries(
    Object.entries(compilerOptions.paths).map(([alias, [target]]) => [`^${alias}$`, `<rootDir>/${target}`]),
  );
