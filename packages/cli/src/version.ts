/** Gatehouse's own release; GET / reports Kong's compatible version separately for Kong tools. */
export const GATEHOUSE_VERSION = '0.1.0';
