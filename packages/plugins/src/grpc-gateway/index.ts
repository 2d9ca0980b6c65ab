import { definePlugin } from '../contract';
import { grpcGatewayAccess, grpcGatewayResponse } from './handler';
import { grpcGatewayConfigSchema, type GrpcGatewayConfig } from './schema';

/**
 * Kong's grpc-gateway (priority 998): REST/JSON requests turned into gRPC calls by the `google.api.http` options of a
 * `.proto` file, the replies turned back into JSON, gRPC statuses into HTTP statuses.
 */
export const grpcGateway = definePlugin<GrpcGatewayConfig, unknown>({
  name: 'grpc-gateway',
  priority: 998,
  version: '3.9.0',
  configSchema: grpcGatewayConfigSchema,
  auth: false,
  noConsumer: false,
  access: grpcGatewayAccess,
  response: grpcGatewayResponse,
});
