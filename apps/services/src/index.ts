/**
 * The service launchers: each `gi` service command (`gi up`, `gi gateway`, ...) starts one of these in
 * its process. Every launcher takes the same three steps: open the store (open-store.ts), build the
 * parts its routers and workers are given (build-deps.ts), serve them over HTTP (serve-http.ts).
 */
export { runEmbedded } from './embedded.service';
export { runGateway } from './gateway.service';
export { runResults } from './results.service';
export { runControl } from './control.service';
export { runExecutor } from './executor.service';
