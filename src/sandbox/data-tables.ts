/** Small lookup tables the synthetic records are drawn from (plausible, never real people). */

// prettier-ignore
export const FIRST_NAMES = [
  'James', 'Mary', 'Robert', 'Patricia', 'John', 'Jennifer', 'Michael', 'Linda', 'David',
  'Elizabeth', 'William', 'Barbara', 'Richard', 'Susan', 'Joseph', 'Jessica', 'Thomas', 'Sarah',
  'Daniel', 'Karen', 'Priya', 'Wei', 'Carlos', 'Amara', 'Lukas', 'Sofia', 'Kenji', 'Fatima',
] as const;

// prettier-ignore
export const LAST_NAMES = [
  'Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez',
  'Martinez', 'Hernandez', 'Lopez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson',
  'Martin', 'Lee', 'Patel', 'Chen', 'Nakamura', 'Okafor', 'Schmidt', 'Rossi', 'Dubois', 'Kim',
] as const;

/** [title, job_level, department]. */
export const ROLES: readonly (readonly [string, string, string])[] = [
  ['Chief Executive Officer', 'C-Level', 'Executive'],
  ['Chief Technology Officer', 'C-Level', 'Engineering'],
  ['Chief Financial Officer', 'C-Level', 'Finance'],
  ['Chief Marketing Officer', 'C-Level', 'Marketing'],
  ['VP of Sales', 'VP', 'Sales'],
  ['VP of Engineering', 'VP', 'Engineering'],
  ['VP of Marketing', 'VP', 'Marketing'],
  ['Director of Operations', 'Director', 'Operations'],
  ['Director of Human Resources', 'Director', 'Human Resources'],
  ['Director of Product', 'Director', 'Product'],
  ['Engineering Manager', 'Manager', 'Engineering'],
  ['Sales Manager', 'Manager', 'Sales'],
  ['Marketing Manager', 'Manager', 'Marketing'],
  ['IT Manager', 'Manager', 'Information Technology'],
  ['Software Engineer', 'Staff', 'Engineering'],
  ['Account Executive', 'Staff', 'Sales'],
  ['Financial Analyst', 'Staff', 'Finance'],
  ['Customer Success Specialist', 'Staff', 'Customer Success'],
];

/** [country, state, city, zip prefix, phone prefix, street]. */
export const PLACES: readonly (readonly [string, string, string, string, string, string])[] = [
  ['United States', 'California', 'San Francisco', '941', '+1 415 555', 'Market Street'],
  ['United States', 'New York', 'New York', '100', '+1 212 555', 'Broadway'],
  ['United States', 'Texas', 'Austin', '787', '+1 512 555', 'Congress Avenue'],
  ['United States', 'Illinois', 'Chicago', '606', '+1 312 555', 'Wacker Drive'],
  ['United States', 'Massachusetts', 'Boston', '021', '+1 617 555', 'Boylston Street'],
  ['United States', 'Washington', 'Seattle', '981', '+1 206 555', 'Pike Street'],
  ['United States', 'Georgia', 'Atlanta', '303', '+1 404 555', 'Peachtree Street'],
  ['United States', 'Colorado', 'Denver', '802', '+1 303 555', 'Larimer Street'],
  ['United Kingdom', 'England', 'London', 'EC1A ', '+44 20 7946', 'Old Street'],
  ['Germany', 'Berlin', 'Berlin', '101', '+49 30 5550', 'Friedrichstrasse'],
  ['Canada', 'Ontario', 'Toronto', 'M5V ', '+1 416 555', 'King Street West'],
  ['Australia', 'New South Wales', 'Sydney', '20', '+61 2 5550', 'George Street'],
];

/** [industry, SIC code, NAICS code, what it does]. */
export const INDUSTRIES: readonly (readonly [string, number, number, string])[] = [
  ['Computer Software', 7372, 511210, 'builds software for'],
  ['Information Technology and Services', 7373, 541512, 'provides IT services to'],
  ['Financial Services', 6199, 523999, 'offers financial products to'],
  ['Hospital & Health Care', 8062, 622110, 'delivers health care services to'],
  ['Marketing and Advertising', 7311, 541810, 'runs marketing programs for'],
  ['Retail', 5399, 452319, 'sells consumer goods to'],
  ['Logistics and Supply Chain', 4731, 488510, 'moves freight for'],
  ['Construction', 1542, 236220, 'builds commercial projects for'],
  ['Management Consulting', 8742, 541611, 'advises'],
  ['Renewables & Environment', 4911, 221114, 'supplies clean energy to'],
];

// prettier-ignore
export const AUDIENCES = [
  'mid-market companies', 'enterprises', 'small businesses', 'public agencies', 'consumers',
] as const;

/** Range labels ordered by size, with the bounds employees_number is drawn from. */
export const EMPLOYEE_RANGES: readonly (readonly [string, number, number])[] = [
  ['1-10', 1, 10],
  ['11-50', 11, 50],
  ['51-200', 51, 200],
  ['201-500', 201, 500],
  ['501-1000', 501, 1000],
  ['1001-5000', 1001, 5000],
  ['5001-10000', 5001, 10000],
  ['10001+', 10001, 60000],
];

/** Revenue labels, index-aligned with EMPLOYEE_RANGES so size and revenue agree; bounds in $. */
export const REVENUE_RANGES: readonly (readonly [string, number, number])[] = [
  ['$0-1M', 100_000, 1_000_000],
  ['$1M-10M', 1_000_000, 10_000_000],
  ['$10M-50M', 10_000_000, 50_000_000],
  ['$50M-100M', 50_000_000, 100_000_000],
  ['$100M-250M', 100_000_000, 250_000_000],
  ['$250M-500M', 250_000_000, 500_000_000],
  ['$500M-1B', 500_000_000, 1_000_000_000],
  ['$1B+', 1_000_000_000, 4_000_000_000],
];

// prettier-ignore
export const FUNDING_ROUNDS = [
  'Seed', 'Series A', 'Series B', 'Series C', 'Series D', 'Private Equity', 'Debt Financing',
] as const;

// prettier-ignore
export const CURATED_LISTS = [
  '', '', 'Fast Growth 500', 'Best Places to Work', 'Top 100 Innovators', 'Green Leaders',
] as const;

// prettier-ignore
export const COMPANY_WORDS = [
  'Acme', 'Northwind', 'Bluepeak', 'Silverline', 'Brightpath', 'Ironwood', 'Cobalt', 'Lumen',
  'Redwood', 'Summit', 'Vertex', 'Harbor', 'Keystone', 'Orbit', 'Pioneer', 'Quantum',
] as const;

// prettier-ignore
export const COMPANY_SUFFIXES = [
  'Labs', 'Systems', 'Group', 'Holdings', 'Partners', 'Technologies', 'Industries', 'Solutions',
] as const;
