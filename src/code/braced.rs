//! By language, node kinds beneath which a node a pattern of the tags query starts at can lie
//! only inside braces: types, names, parameters and arguments, attributes, and the
//! expressions that hold a definition only through a body, a class or an object written in
//! them. The walk for the definitions of outline and find_symbol (`parse::each_node`) does
//! not go into such a node when its text holds no `{` (most of them: `List<int>`, `(a, b)`,
//! `[Fact]`, `x.y`); a node a pattern starts at is still looked at itself, and the matcher
//! reads its children on its own. One per line; C++ adds its own to C's, TypeScript its types
//! to JavaScript's.
//!
//! What may not be listed: a kind that holds definitions without braces, such as a
//! declaration of several (`const a = 1, b = 2`, Go's `const ( … )`, PHP's parameters, which
//! declare promoted properties), a file or a namespace, or C's `#if`. In JavaScript and
//! TypeScript a definition without braces has an arrow (`o.f = x => …`, which code writes in
//! a declarator's value, `const f = exports.f = …`, in a call's arguments, in an operand:
//! minified code's `a&&(i.f=e=>…)`), so there the walk goes into a listed kind's node that
//! holds a `{` or a `=>`. A list's names are the grammar's (a unit test of `parse`);
//! `benches/skim_same.py` holds what the walk finds to what the whole walk of everything
//! finds, file by file over real trees.

use super::Lang;

/// The language's kinds, sorted.
pub fn kinds(lang: Lang) -> Vec<&'static str> {
    let lists: &[&str] = match lang {
        Lang::CSharp => &[CSHARP],
        Lang::Go => &[GO],
        Lang::JavaScript => &[JAVASCRIPT],
        Lang::TypeScript | Lang::Tsx => &[JAVASCRIPT, TYPESCRIPT_TYPES],
        Lang::Java => &[JAVA],
        Lang::Php => &[PHP],
        Lang::C => &[C],
        Lang::Cpp => &[C, CPP_MORE],
        Lang::Rust | Lang::Python | Lang::Ruby | Lang::Bash => &[],
    };
    let mut kinds: Vec<&str> = lists.iter().flat_map(|l| l.split_whitespace()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    kinds
}

const CSHARP: &str = "
argument
argument_list
array_type
arrow_expression_clause
attribute
attribute_argument
attribute_argument_list
attribute_list
base_list
generic_name
implicit_object_creation_expression
invocation_expression
lambda_expression
member_access_expression
nullable_type
object_creation_expression
parameter
parameter_list
qualified_name
tuple_type
type_argument_list
type_parameter
type_parameter_constraints_clause
type_parameter_list
variable_declaration
variable_declarator
";

const GO: &str = "
argument_list
array_type
binary_expression
call_expression
channel_type
const_spec
expression_list
function_type
generic_type
index_expression
map_type
parameter_declaration
parameter_list
pointer_type
selector_expression
slice_type
type_arguments
type_spec
unary_expression
var_spec
variadic_parameter_declaration
";

const JAVASCRIPT: &str = "
arguments
array
assignment_expression
await_expression
binary_expression
call_expression
expression_statement
formal_parameters
member_expression
new_expression
parenthesized_expression
return_statement
sequence_expression
spread_element
subscript_expression
template_string
ternary_expression
unary_expression
variable_declarator
";

const TYPESCRIPT_TYPES: &str = "
array_type
generic_type
intersection_type
literal_type
optional_parameter
required_parameter
tuple_type
type_annotation
type_arguments
type_parameter
type_parameters
union_type
";

const JAVA: &str = "
annotation
annotation_argument_list
argument_list
array_type
binary_expression
cast_expression
dimensions
element_value_pair
field_access
formal_parameter
formal_parameters
generic_type
method_invocation
scoped_type_identifier
super_interfaces
superclass
throws
type_arguments
type_bound
type_list
type_parameter
type_parameters
variable_declarator
";

const PHP: &str = "
argument
arguments
array_creation_expression
array_element_initializer
attribute
attribute_group
attribute_list
base_clause
binary_expression
class_constant_access_expression
class_interface_clause
const_element
function_call_expression
member_access_expression
named_type
namespace_name
optional_type
property_element
qualified_name
simple_parameter
union_type
variable_name
";

const C: &str = "
argument_list
attribute_specifier
binary_expression
call_expression
cast_expression
function_declarator
init_declarator
parameter_declaration
parameter_list
pointer_declarator
sizeof_expression
type_descriptor
";

const CPP_MORE: &str = "
qualified_identifier
template_argument_list
template_type
";
