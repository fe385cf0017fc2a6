export { createGridFsFileStore, FILES_BUCKET, GRIDFS_INDEXES, GridFsFileStore } from './gridfs-file.store';
export type { GridFsFileStoreOptions } from './gridfs-file.store';
