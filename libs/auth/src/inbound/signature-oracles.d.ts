// GitHub's signature library publishes its types under `exports` only, which this project's module
// resolution (node10) does not read; its two functions, as documented, for the tests that use it as an oracle.
declare module '@octokit/webhooks-methods' {
  export function sign(secret: string, payload: string): Promise<string>;
  export function verify(secret: string, payload: string, signature: string): Promise<boolean>;
}
