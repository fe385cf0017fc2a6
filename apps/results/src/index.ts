export { resultsRouter } from './results.router';
export type { ResultsDeps, ResultsSettings } from './results.deps';
