export { asyncApiDocument, renderAsyncApi } from './asyncapi.js';
export type { AsyncApiInfo, ContractDocs } from './asyncapi.js';
export { checkAsyncApi, contractDifferences } from './check.js';
