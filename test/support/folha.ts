/** An accounting sheet's header and rows as the four-eyes tests drop them: R$ 3.500,00, R$ 2.500,00 and R$ 4.450,50. */
export const HEADER = 'Nome,CPF,E-mail,Celular,Chave Pix,Valor';
export const ANA =
  'Ana Souza,529.982.247-25,ana@example.com,(11) 98765-4321,ana@example.com,"3.500,00"';
export const BRUNO =
  'Bruno Lima,111.444.777-35,bruno@example.com,(21) 99876-5432,bruno@example.com,"2.500,00"';
export const CARLA =
  'Carla Dias,390.533.447-05,carla@example.com,(31) 99123-4567,carla@example.com,"4.450,50"';
