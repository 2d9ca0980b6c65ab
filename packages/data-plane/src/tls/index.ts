export * from './vault-resolver';
export * from './sni-store';
export * from './upstream-tls';
export * from './compile-tls';
export * from './default-certificate';
