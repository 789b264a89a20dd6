declare module 'asl-validator' {
  interface AslValidationError {
    readonly 'Error code': string;
    readonly Message: string;
  }
  export default function aslValidator(
    definition: unknown,
    options?: { checkPaths?: boolean; checkArn?: boolean },
  ): { isValid: boolean; errors: AslValidationError[]; errorsText(separator?: string): string };
}
