/** The generator version written into generated headers; bump it when the emitted shape changes. */
export const GENERATOR_VERSION = '0.2.0';
