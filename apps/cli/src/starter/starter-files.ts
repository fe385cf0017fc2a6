import { CONTEXT_TYPES } from './context-types.generated';

/**
 * The project `gi connector init` writes: a TypeScript connector split in two files, the connector
 * types, a tsconfig for `tsc --noEmit` (the deploy strips types without checking them), a sample
 * request and a README with the commands of the authoring loop.
 */
export function starterFiles(name: string): Record<string, string> {
  return {
    'src/index.ts': INDEX_TS,
    'src/order.ts': ORDER_TS,
    'context.d.ts': CONTEXT_TYPES,
    'tsconfig.json': `${JSON.stringify(TSCONFIG, null, 2)}\n`,
    'package.json': `${JSON.stringify(packageJson(name), null, 2)}\n`,
    'samples/order.json': `${JSON.stringify(SAMPLE_ORDER, null, 2)}\n`,
    'README.md': readme(name),
    '.gitignore': 'node_modules/\n',
  };
}

const INDEX_TS = `// The connector: this file's top-level code runs on every call of the integration, with the files
// it imports and the npm packages of node_modules bundled in at deploy. Top-level await works;
// top-level return does not (the file is a module): end early with Context.RaiseError or if/else.
// Context, fetch and the other globals are declared in ../context.d.ts.
import { describeOrder, orderProblem, orderTotal, type Order } from './order';

/**
 * Where accepted orders are forwarded: the secret ORDERS_API (gi secrets set, and deploy with
 * --allowed-host for its host; locally --secret-env ORDERS_API); none forwards nowhere.
 */
const ORDERS_API: string = Context.Secrets.ORDERS_API ?? '';

const entity = Context.GetRequestEntity();
if (!entity) Context.RaiseError('Missing entity', 'The request entity is null');

const problem = orderProblem(entity.RequestBody);
if (problem) Context.RaiseError('Invalid order', problem);
const order = entity.RequestBody as Order;
const source = new URLSearchParams(entity.RequestParams).get('source') ?? 'unknown';

let forwarded: number | null = null;
if (ORDERS_API) {
  const response = await fetch(\`\${ORDERS_API}/orders\`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ ...order, total: orderTotal(order) }),
  });
  forwarded = response.status;
}

Context.Log(\`accepted \${describeOrder(order)} from \${source}\`);
entity.ResponseBody = { Status: 'Accepted', Message: describeOrder(order), Total: orderTotal(order), Forwarded: forwarded };
Context.SetResponseEntity(entity);
`;

const ORDER_TS = `/** An order as the shop posts it. */
export interface Order {
  orderId: number;
  customer: string;
  items: Array<{ sku: string; quantity: number; price: number }>;
}

/** Why a request body is not an order, or null when it is one. */
export function orderProblem(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return 'The body must be a JSON object.';
  const { orderId, customer, items } = body as Partial<Order>;
  if (typeof orderId !== 'number') return 'orderId must be a number.';
  if (typeof customer !== 'string' || customer === '') return 'customer must be a non-empty string.';
  if (!Array.isArray(items) || items.length === 0) return 'items must be a non-empty array.';
  return null;
}

export const orderTotal = (order: Order): number => order.items.reduce((sum, item) => sum + item.quantity * item.price, 0);

export const describeOrder = (order: Order): string =>
  \`order \${order.orderId} for \${order.customer}: \${order.items.length} item(s), \${orderTotal(order).toFixed(2)}\`;
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'es2023',
    lib: ['es2023'],
    types: [],
    module: 'esnext',
    moduleResolution: 'bundler',
    strict: true,
    noEmit: true,
    isolatedModules: true,
    skipLibCheck: false,
  },
  include: ['src', 'context.d.ts'],
};

const packageJson = (name: string) => ({
  name,
  private: true,
  type: 'module',
  scripts: {
    typecheck: 'tsc --noEmit',
    test: 'gi connector run src/index.ts --request samples/order.json',
  },
  devDependencies: { typescript: '^5.9.0' },
});

const SAMPLE_ORDER = {
  query: { source: 'shop' },
  headers: { 'X-Request-Source': 'sample' },
  body: { orderId: 42, customer: 'Ada', items: [{ sku: 'tea', quantity: 2, price: 3.5 }] },
};

const readme = (name: string) => `# ${name}: a Generic Integration connector

\`src/index.ts\` is the connector: its top-level code runs on every call of the integration. It sees
\`Context\`, \`console\` and the web APIs of Workers-style runtimes, declared in \`context.d.ts\`.

## Try it

    gi connector run src/index.ts --request samples/order.json

runs it locally, in the same sandbox as the service, against the request in \`samples/order.json\`
(\`query\`, \`headers\`, \`contentType\`, \`body\`), and prints the \`ResponseBody\`, the log lines and the
duration. It exits 1 when the run raises or fails: \`npm test\` runs the same command. Save more
samples beside it, or change a part on the command line (\`--body '{"orderId": 7}'\`, \`--query k=v\`).

## Check the types

    npm install && npm run typecheck

Deploying and \`gi connector run\` strip the types without checking them, so a type error never
blocks a deploy: run \`tsc --noEmit\` (\`npm run typecheck\`) yourself, or in your CI.

## Packages

\`npm install <package>\` and import it: the bundle takes packages from this project's
\`node_modules\`. The sandbox is not Node.js: packages that import Node's built-in modules (\`fs\`,
\`node:crypto\`, ...) are refused at deploy, naming the import.

## Deploy

    gi entity create shop Order
    gi connector deploy src/index.ts --bot shop --integration orders --entity Order

bundles \`src/index.ts\` with what it imports into one script, refuses syntax errors with file, line
and column, and sends the script with this project's own files: \`gi connector show --bot shop
--integration orders\` prints them (\`--bundle\` prints the script).

## Forward orders to an API

\`src/index.ts\` posts each accepted order to the address in the secret \`ORDERS_API\`, when there is
one. Locally, against a mock API on this machine:

    ORDERS_API=http://127.0.0.1:4010 gi connector run src/index.ts --request samples/order.json \\
      --secret-env ORDERS_API --allowed-host 127.0.0.1 --trust-loopback

Deployed: \`printf %s "$URL" | gi secrets set --bot shop --integration orders ORDERS_API\`, and deploy
with \`--allowed-host\` for the API's host.
`;
