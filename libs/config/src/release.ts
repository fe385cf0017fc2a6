/** Set by the build (tools/build.mjs) from package.json; absent when the sources run unbundled (tests). */
declare const __GI_RELEASE__: string | undefined;

/** The release this process runs, for its start line and `gi_build_info`. */
export const RELEASE_VERSION: string = typeof __GI_RELEASE__ === 'string' ? __GI_RELEASE__ : 'dev';
