/**
 * @app/apiserver: the kube-apiserver, for the services that talk to it when
 * the node joins a cluster (config-source reads its pods; status-manager
 * writes pod statuses and Events; node-status the Node, its Lease and the
 * mirror pods; kubelet-server reviews tokens and access).
 */
export { ApiError, ApiServer, PatchType, isAlreadyExists, isConflict, isGone, isNotFound } from './api-server.js';
export type { RequestInit, WatchEvent } from './api-server.js';
export { Reflector } from './reflector.js';
export type { ListWatchClient, ObjectWithMeta, ReflectorOptions } from './reflector.js';
export { POD_STATUS_MERGE_KEYS, applyStrategicMergePatch, createTwoWayMergePatch } from './strategic-merge-patch.js';
export type { MergeKeys } from './strategic-merge-patch.js';
export { connectApiServer } from './connect.js';
export { ReflectorApiPods } from './node-pods.js';
