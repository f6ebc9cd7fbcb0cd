fn main() {
    println!("hello, world");
    let x = 1;
    let y = 2;
    println!("{}", x + y);
}
