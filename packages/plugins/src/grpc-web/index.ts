import { definePlugin } from '../contract';
import { grpcWebAccess, grpcWebResponse } from './handler';
import { grpcWebConfigSchema, type GrpcWebConfig } from './schema';

/**
 * Kong's grpc-web (priority 3): browsers' gRPC-Web calls over HTTP/1.1 or HTTP/2 proxied to a gRPC service, the
 * response's messages and trailers sent back in the body as gRPC-Web frames.
 */
export const grpcWeb = definePlugin<GrpcWebConfig, unknown>({
  name: 'grpc-web',
  priority: 3,
  version: '3.9.0',
  configSchema: grpcWebConfigSchema,
  auth: false,
  noConsumer: false,
  access: grpcWebAccess,
  response: grpcWebResponse,
});
