export { KvPodManager, PodManager, podManagerKey, podManagerMirror, podManagerStore } from './pod-manager.js';
export { KvPodReadModel, PodReadModel, podList, podWithStatus, withProbeResults } from './read-model.js';
