// kafkajs's Cluster class (init-retry.ts gives InitProducerId a retry through its prototype).
declare module 'kafkajs/src/cluster/index.js' {
  const Cluster: { readonly prototype: object };
  export default Cluster;
}
