/** The one place that hands out the process environment; everything else receives parsed configuration. */
export const processEnvironment = (): NodeJS.ProcessEnv => process.env;
