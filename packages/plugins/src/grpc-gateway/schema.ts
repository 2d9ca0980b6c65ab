import { z } from 'zod';

/** Kong 3.9 `grpc-gateway`: the `.proto` file whose `google.api.http` options map REST calls onto RPCs. */
export const grpcGatewayConfigSchema = z
  .object({
    proto: z.string().nullable().default(null),
  })
  .strict();

export type GrpcGatewayConfig = z.infer<typeof grpcGatewayConfigSchema>;
