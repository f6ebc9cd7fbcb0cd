fn main() {
    println!("hello");
    let x = 1;
    let y = 2;
    println!("{}", x + y);
}
