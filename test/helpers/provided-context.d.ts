// What the integration global setup hands to every test file through `inject()`.
import 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    kafkaBrokers: string;
    kafkaClusterId: string;
    dynamodbEndpoint: string;
  }
}
