export { DiskFileStore } from './disk-file.store';
