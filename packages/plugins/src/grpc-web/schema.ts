import { z } from 'zod';

/** Kong 3.9 `grpc-web`: the `.proto` file for JSON transcoding, the path sent upstream and the CORS origin. */
export const grpcWebConfigSchema = z
  .object({
    proto: z.string().nullable().default(null),
    pass_stripped_path: z.boolean().nullable().default(null),
    allow_origin_header: z.string().nullable().default('*'),
  })
  .strict();

export type GrpcWebConfig = z.infer<typeof grpcWebConfigSchema>;
